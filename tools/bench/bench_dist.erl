%% bench_dist.erl: the Erlang/OTP side of tools/bench/bench_gateway.c,
%% the figures actord's gateway is compared with: two Erlang nodes on this
%% host, talking over Erlang distribution (TCP, 127.0.0.1), 64-byte
%% binaries.  bench_gateway compiles it with erlc into a private
%% directory and starts both nodes with -pa there.
%%
%%   serve()   on the server node: two registered gen_servers,
%%             bench_echo (a call is answered with its payload) and
%%             bench_sink (casts are counted; the call 'count' answers
%%             the count so far); then it waits until it is killed.
%%   client([Node, NCalls, NCasts, OutFile])   on the client node:
%%             NCalls calls of bench_echo, each timed (p50, p99), after
%%             a tenth as many to warm up; then NCasts casts to
%%             bench_sink and one call 'count', which comes after them
%%             (order per pair of processes): casts delivered per
%%             second.  Writes "P50_US P99_US CASTS_PER_S DELIVERED" to
%%             OutFile and halts.
-module(bench_dist).
-behaviour(gen_server).
-export([serve/0, client/1]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

serve() ->
    {ok, _} = gen_server:start({local, bench_echo}, ?MODULE, echo, []),
    {ok, _} = gen_server:start({local, bench_sink}, ?MODULE, sink, []),
    ok.

init(echo) -> {ok, echo};
init(sink) -> {ok, 0}.

handle_call(count, _From, N) when is_integer(N) -> {reply, N, N};
handle_call(Payload, _From, echo) -> {reply, Payload, echo}.

handle_cast({msg, _Payload}, N) -> {noreply, N + 1}.

handle_info(_, S) -> {noreply, S}.

client([Node0, NCalls0, NCasts0, Out]) ->
    Node = list_to_atom(Node0),
    NCalls = list_to_integer(NCalls0),
    NCasts = list_to_integer(NCasts0),
    ok = wait_for(Node, 300),
    Pay = binary:copy(<<"x">>, 64),
    Echo = {bench_echo, Node},
    Sink = {bench_sink, Node},
    [Pay = gen_server:call(Echo, Pay) || _ <- lists:seq(1, NCalls div 10)],
    Lat = lists:sort([timed(Echo, Pay) || _ <- lists:seq(1, NCalls)]),
    T0 = erlang:monotonic_time(nanosecond),
    casts(Sink, Pay, NCasts),
    Count = gen_server:call(Sink, count, 120000),
    T1 = erlang:monotonic_time(nanosecond),
    Rate = Count / ((T1 - T0) / 1.0e9),
    ok = file:write_file(Out, io_lib:format("~.1f ~.1f ~.1f ~b~n",
        [nth(0.50, Lat) / 1000, nth(0.99, Lat) / 1000, Rate, Count])),
    halt(0).

%% The server node's processes answer: until then, try again (100 ms).
wait_for(_Node, 0) -> timeout;
wait_for(Node, Tries) ->
    case catch gen_server:call({bench_sink, Node}, count, 1000) of
        N when is_integer(N) -> ok;
        _ -> timer:sleep(100), wait_for(Node, Tries - 1)
    end.

timed(Echo, Pay) ->
    T0 = erlang:monotonic_time(nanosecond),
    Pay = gen_server:call(Echo, Pay),
    erlang:monotonic_time(nanosecond) - T0.

casts(_Sink, _Pay, 0) -> ok;
casts(Sink, Pay, N) ->
    gen_server:cast(Sink, {msg, Pay}),
    casts(Sink, Pay, N - 1).

%% The quantile Q of a sorted list of nanoseconds.
nth(Q, L) -> lists:nth(max(1, round(Q * length(L))), L).
