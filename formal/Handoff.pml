/*
 * Handoff.pml -- one key changing owner in a cluster.
 *
 * Two nodes, each with its own event loop (its own process here), each
 * running the per-key engine for the key: a FIFO lane and at most one call in
 * flight. Node 0 owns the key first. A membership change makes node 1 the
 * owner; from then on callers send the key's inputs to node 1.
 *
 * Protocol modelled (the design we intend to build):
 *   1. on taking over, the new owner asks the old owner to hand the key over,
 *      and buffers the key's inputs that reach it meanwhile;
 *   2. the old owner stops dispatching the key, waits until its in-flight
 *      call (if any) is over, then forwards its waiting inputs in order,
 *      followed by an end marker;
 *   3. the new owner queues the forwarded inputs, then the buffered ones,
 *      and only then starts dispatching the key.
 *
 * Properties: never two calls in flight for the key across both nodes; the
 * key's inputs are sent in submission order; every input is answered exactly
 * once (assertions + no invalid end state).
 *
 * Weakened variants (each must fail):
 *   HandoffNoWait     the new owner does not wait for the old owner: it
 *                     dispatches the key as soon as it takes over
 *   HandoffOldNoWait  the old owner forwards as soon as it is asked, even
 *                     with a call still on the wire
 *
 * Not modelled: deadlines, close, other keys, network delay of callers'
 * inputs (a caller's routing decision and the admission are one step), node
 * failure.
 */

#ifndef N
#define N 3               /* inputs for the key */
#endif
#ifndef MAXB
#define MAXB 2
#endif

#define END 255           /* end-of-hand-off marker on the forward channel */

#define NEW  0
#define WAIT 1
#define SENT 2
#define DONE 3

byte st[N];

bool route;               /* callers' view: 0 = node 0 owns, 1 = node 1 */
chan askHandoff = [1] of { bit };     /* node 1 -> node 0 */
chan forward = [N+1] of { byte };     /* node 0 -> node 1 */

chan lane[2] = [N] of { byte };       /* waiting inputs per node */
bool inflight[2];
byte callMem[2];                      /* inputs of the node's call */
bool handingOff;                      /* node 0 stopped dispatching */
bool handedOff;                       /* node 0 sent the end marker */
chan buffered = [N] of { byte };      /* node 1's inputs before the hand-off */
bool ready1;                          /* node 1 has the hand-off */

/* ghost */
byte wire;                            /* calls for the key on the wire */
byte nextSeq;

#define canDispatch(n) ((n) == 0 && !handingOff || (n) == 1 && ready1)

inline answer(x) {
  assert(st[x] != DONE);
  st[x] = DONE
}

inline dispatch(n) {
  if
  :: canDispatch(n) && !inflight[n] && len(lane[n]) > 0 ->
     dm = 0; dc = 0;
     do
     :: dc < MAXB && len(lane[n]) > 0 ->
        lane[n]?dx;
        assert(dx >= nextSeq);        /* sent in submission order */
        nextSeq = dx + 1;
        st[dx] = SENT; dm = dm | (1 << dx); dc++
     :: else -> break
     od;
     inflight[n] = 1; callMem[n] = dm;
     wire++;
     assert(wire <= 1)                /* never two calls for the key */
  :: else -> skip
  fi
}

/* old owner: forward everything still waiting, in order, then the marker */
inline handOver() {
  do
  :: len(lane[0]) > 0 -> lane[0]?dx; forward!dx
  :: else -> break
  od;
  forward!END;
  handedOff = 1
}

inline admit(x) {
  st[x] = WAIT;
  if
  :: route == 0 -> lane[0]!x; dispatch(0)
  :: route == 1 && !ready1 -> buffered!x
  :: route == 1 && ready1 -> lane[1]!x; dispatch(1)
  fi
}

#define SCRATCH byte dx, dm, dc
#define CLEAR   dx = 0; dm = 0; dc = 0

proctype Caller() {
  SCRATCH;
  byte seq;
  do
  :: seq < N -> atomic { admit(seq); seq++; CLEAR }
  :: else -> break
  od;
  (st[0] == DONE && st[N-1] == DONE && (N < 3 || st[1] == DONE))
}

/* node 0's event loop: the hand-off request */
proctype Old() {
  SCRATCH;
end:
  do
  :: atomic {
       askHandoff?_ ->
       handingOff = 1;
#ifdef HandoffOldNoWait
       handOver();
#else
       if
       :: !inflight[0] -> handOver()
       :: else -> skip               /* completed will hand over */
       fi;
#endif
       CLEAR
     }
  od
}

/* node 1's event loop: forwarded inputs and the end marker */
proctype New() {
  SCRATCH;
end:
  do
  :: atomic {
       forward?dx ->
       if
       :: dx == END ->
          ready1 = 1;
          do
          :: len(buffered) > 0 -> buffered?dx; lane[1]!dx
          :: else -> break
          od;
          dispatch(1)
       :: else -> lane[1]!dx; dispatch(1)   /* a no-op until ready1 */
       fi;
       CLEAR
     }
  od
}

/* the downstream of node n's call; completion runs on node n's loop */
proctype Call(byte n) {
  SCRATCH;
end:
  do
  :: atomic {
       inflight[n] ->
       wire--;
       dx = 0;
       do
       :: dx < N ->
          if
          :: (callMem[n] >> dx) & 1 -> answer(dx)
          :: else -> skip
          fi;
          dx++
       :: else -> break
       od;
       inflight[n] = 0; callMem[n] = 0;
       if
       :: n == 0 && handingOff && !handedOff -> handOver()
       :: else -> dispatch(n)
       fi;
       CLEAR
     }
  od
}

/* the membership change: node 1 becomes the owner, or nothing happens */
proctype Membership() {
  if
#ifdef HandoffNoWait
  :: atomic { route = 1; ready1 = 1; askHandoff!1 }
#else
  :: atomic { route = 1; askHandoff!1 }
#endif
  :: skip
  fi
}

init {
  atomic {
    run Caller();
    run Old();
    run New();
    run Call(0);
    run Call(1);
    run Membership()
  }
}
