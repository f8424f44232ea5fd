/*
 * Handoff.pml -- one key changing owner in a cluster, as the code does it:
 * dev.ferry.cluster.ClusterNode (routing, holds, hand-off, release), Views
 * (gating until released), Forwarder (forwards, paths) and
 * PerKeyEngine#handOff (ADRs 0050-0053).
 *
 * Three nodes, each with its own event loop (one process per node, plus one
 * for the downstream call of its engine):
 *   A (0) owns the key in view V0 = {A, C}; a join makes V1 = {A, B, C}, in
 *   which B (1) owns it. C (2) never owns it: the caller enters there (a
 *   FerryClient bound to one entry node), so per-key order must hold.
 * Each node adopts V1 at its own moment (B knows no view before it). The
 * messages between two nodes travel on one FIFO channel per direction, as
 * the event bus delivers requests from one sender to one address in order.
 *
 * Protocol modelled (the code today):
 *   - route (ClusterNode#route): hold while the view is unknown or the key is
 *     being handed off here; follow the key's open forwarding path when it
 *     leads elsewhere than the owner (or hold, if this node is the owner
 *     now); forward to the owner (marked as hand-off class when this node
 *     owned the key just before); hold while gated (Views#gated); else submit
 *     to this node's engine.
 *   - on adopting V1, the old owner hands the key off (PerKeyEngine#handOff:
 *     stop dispatching, wait for the call in flight, then forward the
 *     waiting inputs in order, marked as hand-offs), holds inputs arriving
 *     meanwhile, flushes them once the hand-off is done, and then sends
 *     release(V1) to every node (ClusterNode#maybeRelease), on the same
 *     channel as, and so after, its hand-off forwards;
 *   - a node that gained the key holds its inputs until every live node of
 *     the views since its last settled one released the current view, then
 *     flushes them, hand-offs first (ClusterNode#flush);
 *   - holds expire (2 x callTimeout, or the caller's deadline): the input is
 *     answered CLOSED or TIMEOUT (any time, here);
 *   - the forwarder relays the owner's answer back along the chain; a path
 *     is clear when its last open forward was answered, and then the node
 *     routes the key's held inputs again (Forwarder#onPathClear).
 *
 * Properties: never two calls in flight for the key across the nodes; the
 * old owner starts no call once its hand-off began, and hands off only with
 * no call on the wire; the key's inputs are sent in submission order; every
 * input is answered exactly once, every forward is answered, nothing is left
 * held (PROP names, as in PerKey.pml).
 *
 * Not modelled: a crash (ADR 0051 does not claim safety across one); a
 * second membership change; the 100 ms retry pacing (it needs two views that
 * disagree about who owns a key while a node forwards to the owner of its
 * own view; in this join the old and the new owner never send a key back).
 */

#ifndef N
#define N 3               /* inputs for the key */
#endif
#ifndef MAXB
#define MAXB 2
#endif

#define A 0
#define B 1
#define C 2
#define NONE 3
#define UNK 2             /* view not known yet */

/* message kinds */
#define FWD 1             /* an input (with its hop, class and sender) */
#define REL 2             /* release of V1 */
#define REP 3             /* the answer to a forward */

#ifdef TARGET
#define PROP(name, c) assert((c) || name != TARGET)
#define PID(v) = v
#else
#define PROP(name, c) assert((c) || name)
#define PID(v)
#endif
hidden byte oneCallPerKey PID(1), keyOrder PID(2), exactlyOnce PID(3),
  stranded PID(4), noCallWhileHanding PID(5), handOffAfterCall PID(6),
  forwardsAnswered PID(7), modelBound PID(8);

/* where an input is */
#define NEW   0
#define MOVE  1   /* in a message between nodes */
#define HELD  2   /* held by the cluster layer of node loc[x] */
#define WAIT  3   /* waiting in the lane of node loc[x]'s engine */
#define SENT  4   /* in a call */
#define DONE  5   /* answered (OK, FAILED, TIMEOUT, CLOSED) */

byte st[N];
byte loc[N];
bool ho[N];               /* Pending#handedOff: hand-off class */
byte hop[N];
byte up[3*N];             /* up[n*N+x]: who forwarded x to n (NONE: the caller) */
bool fwd[3*N];            /* fwd[n*N+x]: n's forward of x is open */
bool onPath[3*N];         /* ... and counts on n's path */

/* node state */
byte vw[3];               /* the node's view: 0, 1 or UNK */
bool handingOff[3];       /* ClusterNode#handingOff has the key */
byte hoOpen[3];           /* ClusterNode#handOffsOpen */
bool relSent[3];          /* release of the current view sent */
bool justBefore[3];       /* Views#ownedJustBefore still true */
bool relGot[3];           /* at B: releases of V1 received, from A and C */
byte pathTo[3];           /* Forwarder: the key's path, NONE if clear */
byte pathOpen[3];
chan held[3] = [N] of { byte };
chan hin[3] = [N] of { byte };    /* held hand-offs (handedIn) */

/* each node's engine for the key */
chan lane[3] = [N] of { byte };
bool inflight[3];
bool handing[3];          /* Lane#handOffs != null */
byte callMem[3];
bool over[3];             /* the call timeout fired */

/* the network: net[src*3+dst] */
chan net[9] = [N+2] of { byte, byte };

/* ghost */
byte wire;                /* calls for the key on the wire, all nodes */
byte nextSeq;

/* scratch (hidden: every event is one atomic step) */
hidden byte dx, dm, dc, hcount, owner, via, rn, rk;

#define known(n)   (vw[n] != UNK)
#define ownerOf(n) (vw[n] == 0 -> A : B)
/* Views#gated at B: the join's views are settled once A and C released V1 */
#define gated(n)   ((n) == B && !(relGot[A] && relGot[C]))
#define idle(n)    (!inflight[n] && len(lane[n]) == 0)

inline answer(x) {
  PROP(exactlyOnce, st[x] != DONE);
  st[x] = DONE
}

/* answer x at node n and send the answer back to whoever forwarded it here */
inline answerAt(n, x) {
  answer(x);
  if
  :: up[n*N+x] != NONE -> net[n*3+up[n*N+x]]!REP,x
  :: else -> skip
  fi
}

inline hold(n, x) {
  st[x] = HELD; loc[x] = n;
  if
  :: ho[x] -> hin[n]!x
  :: else -> held[n]!x
  fi
}

/* Forwarder#forward */
inline forward(n, to, x, cls) {
  fwd[n*N+x] = 1;
  if
  :: pathTo[n] == NONE -> pathTo[n] = to; pathOpen[n] = 1; onPath[n*N+x] = 1
  :: pathTo[n] != NONE && pathTo[n] == to -> pathOpen[n]++; onPath[n*N+x] = 1
  :: else -> onPath[n*N+x] = 0       /* a hand-off straight to the new owner */
  fi;
  ho[x] = cls;
  hop[x] = (hop[x] < 2 -> hop[x] + 1 : 2);
  st[x] = MOVE;
  net[n*3+to]!FWD,x
}

/* the engine of node n: start a call if the key may leave */
inline dispatch(n) {
  if
  :: !inflight[n] && len(lane[n]) > 0 ->
     dm = 0; dc = 0;
     do
     :: dc < MAXB && len(lane[n]) > 0 ->
        lane[n]?dx;
        PROP(keyOrder, dx >= nextSeq);
        nextSeq = dx + 1;
        st[dx] = SENT; dm = dm | (1 << dx); dc++
     :: else -> break
     od;
     PROP(noCallWhileHanding, !handing[n]);
     inflight[n] = 1; callMem[n] = dm; over[n] = 0;
     wire++;
     PROP(oneCallPerKey, wire <= 1)
  :: else -> skip
  fi
}

/* PerKeyEngine#admit (one key: an idle key is called at once) */
inline submit(n, x) {
  st[x] = WAIT; loc[x] = n;
  lane[n]!x;
  dispatch(n)
}

/* ClusterNode#route */
inline route(n, x) {
  owner = ownerOf(n);
  via = (ho[x] -> NONE : pathTo[n]);
  if
  :: !known(n) || handingOff[n] -> hold(n, x)
  :: else ->
     if
     :: via != NONE && via != owner ->
        if
        :: owner == n -> hold(n, x)               /* wait for them to come back */
        :: else -> forward(n, via, x, 0)          /* follow them */
        fi
     :: else ->
        /* the 100 ms pacing of ADR 0053 is never needed in this join */
        PROP(modelBound, owner == n || (owner != up[n*N+x] && hop[x] < 2));
        if
        :: owner != n -> forward(n, owner, x, ho[x] || justBefore[n])
        :: owner == n && gated(n) -> hold(n, x)
        :: owner == n && !gated(n) -> submit(n, x)
        fi
     fi
  fi
}

/* ClusterNode#flush: hand-offs first, then the others, each routed again */
inline flush(n) {
  hcount = len(hin[n]);
  do
  :: hcount > 0 -> hin[n]?rk; route(n, rk); hcount--
  :: else -> break
  od;
  hcount = len(held[n]);
  do
  :: hcount > 0 -> held[n]?rk; route(n, rk); hcount--
  :: else -> break
  od
}

/* ClusterNode#maybeRelease: after the hand-offs, on the same channels */
inline maybeRelease(n) {
  if
  :: known(n) && vw[n] == 1 && !relSent[n] && hoOpen[n] == 0 ->
     relSent[n] = 1;
     if
     :: n != B -> net[n*3+B]!REL,n              /* only B waits for V1 here */
     :: else -> skip
     fi
  :: else -> skip
  fi
}

/* ClusterNode#handedOff for one entry: forwarded to the owner of the view */
inline fwdFromEngine(n, x) {
  owner = ownerOf(n);
  hop[x] = 0;
  /* the engine's entry answers the original Pending here, which relays it */
  forward(n, owner, x, 1)
}

/* PerKeyEngine#finishHandOff and ClusterNode#handedOff: the waiting inputs
 * go to the owner in order, then the hand-off is done */
inline finishHandOff(n) {
  PROP(handOffAfterCall, !inflight[n]);
  do
  :: len(lane[n]) > 0 ->
     lane[n]?rk;
     /* a new Pending of hand-off class, answered back to this node */
     fwdFromEngine(n, rk)
  :: else -> break
  od;
  handing[n] = 0;
  handingOff[n] = 0; hoOpen[n]--;
  flush(n);
  maybeRelease(n)
}

/* ClusterNode#onSnapshot for the view V1 (and handOffLostKeys) */
inline adopt(n) {
  vw[n] = 1;
  relSent[n] = 0;
  if
  :: n == A ->
     justBefore[n] = 1;
     if
     :: !idle(n) ->                              /* an active key it lost */
        handingOff[n] = 1; hoOpen[n]++;
        handing[n] = 1;
        if
        :: !inflight[n] -> finishHandOff(n)
        :: else -> skip                          /* completed finishes it */
        fi
     :: else -> skip
     fi
  :: else -> skip
  fi;
  if
  :: !handingOff[n] -> flush(n)
  :: else -> skip
  fi;
  maybeRelease(n)
}

/* the answer to n's forward of x arrives (Forwarder#forward's onComplete) */
inline replied(n, x) {
  fwd[n*N+x] = 0;
  if
  :: onPath[n*N+x] ->
     onPath[n*N+x] = 0;
     pathOpen[n]--;
     if
     :: pathOpen[n] == 0 ->
        pathTo[n] = NONE;
        if
        :: !handingOff[n] -> flush(n)
        :: else -> skip
        fi
     :: else -> skip
     fi
  :: else -> skip
  fi;
  if
  :: up[n*N+x] != NONE -> net[n*3+up[n*N+x]]!REP,x   /* relayed unchanged */
  :: else -> skip                                     /* the caller has it */
  fi
}

/* one node's event loop */
proctype Node(byte n) {
  byte m, kind, x;
end:
  do
  /* a message from node m */
  :: atomic {
       nempty(net[0*3+n]) || nempty(net[1*3+n]) || nempty(net[2*3+n]) ->
       if
       :: net[0*3+n]?kind,x -> m = 0
       :: net[1*3+n]?kind,x -> m = 1
       :: net[2*3+n]?kind,x -> m = 2
       fi;
       if
       :: kind == FWD -> up[n*N+x] = m; route(n, x)
       :: kind == REL -> relGot[x] = 1;
          if
          :: vw[n] == 1 -> flush(n)
          :: else -> skip
          fi
       :: kind == REP -> replied(n, x)
       fi;
       m = 0; kind = 0; x = 0
     }
  /* the membership view V1 reaches this node */
  :: atomic { vw[n] != 1 -> adopt(n) }
  /* Views#ownedJustBefore's window passes */
  :: atomic { justBefore[n] -> justBefore[n] = 0 }
  /* a hold expires (2 x callTimeout, or the caller's deadline) */
  :: atomic {
       nempty(held[n]) -> held[n]?x; answerAt(n, x); x = 0
     }
  :: atomic {
       nempty(hin[n]) -> hin[n]?x; answerAt(n, x); x = 0
     }
  od
}

/* the downstream call of node n's engine; completion runs on n's loop */
proctype Call(byte n) {
end:
  do
  :: atomic {
       inflight[n] ->
       wire--;
       dx = 0;
       do
       :: dx < N ->
          if
          :: (callMem[n] >> dx) & 1 && st[dx] == SENT -> answerAt(n, dx)
          :: else -> skip
          fi;
          dx++
       :: else -> break
       od;
       inflight[n] = 0; callMem[n] = 0; over[n] = 0;
       if
       :: handing[n] -> finishHandOff(n)
       :: else -> dispatch(n)
       fi
     }
  /* the call timeout: its callers fail now, the key stays in flight */
  :: atomic {
       inflight[n] && !over[n] ->
       over[n] = 1;
       dx = 0;
       do
       :: dx < N ->
          if
          :: (callMem[n] >> dx) & 1 && st[dx] == SENT -> answerAt(n, dx)
          :: else -> skip
          fi;
          dx++
       :: else -> break
       od
     }
  od
}

/* the caller, bound to entry node C: its inputs in order */
proctype Caller() {
  byte seq;
  do
  :: seq < N -> atomic { up[C*N+seq] = NONE; route(C, seq); seq++ }
  :: else -> break
  od
}

/* when nothing can move any more: everything answered, nothing held */
proctype Auditor() {
  byte x;
  timeout ->
  atomic {
    do
    :: x < N -> PROP(stranded, st[x] == DONE); x++
    :: else -> break
    od;
    x = 0;
    do
    :: x < 3*N -> PROP(forwardsAnswered, !fwd[x]); x++
    :: else -> break
    od;
    x = 0
  }
}

init {
  atomic {
    vw[A] = 0; vw[B] = UNK; vw[C] = 0;
    pathTo[A] = NONE; pathTo[B] = NONE; pathTo[C] = NONE;
    run Node(A); run Node(B); run Node(C);
    run Call(A); run Call(B);
    run Caller();
    run Auditor()
  }
}
