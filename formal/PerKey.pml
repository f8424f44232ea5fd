/*
 * PerKey.pml -- model of dev.ferry.internal.PerKeyEngine (Ferry.perKey).
 *
 * The engine lives on one Vert.x event loop, so every engine event is one
 * atomic step here: admit, dispatch (always run at the end of another event),
 * completed, expire, callOverdue, close, drain. The downstream call is the
 * only thing that runs beside the loop: each call record has its own Call
 * process that may report completion (or the call timeout) at any moment.
 *
 * Sizes are small on purpose; override with -D (K keys, N inputs per key,
 * SLOTS = maxInFlightBatches, MAXB = maxBatchSize, MAXQ = maxQueueing).
 *
 * Switches:
 *   BATCH_ONLY           direct calls off (every input goes through the line)
 *   FOREVER              callers start a new round once all their answers are
 *                        in, so runs are infinite (used for the LTL checks)
 * Deliberately broken variants (each must produce a counterexample):
 *   PerKeyNoDirectGuard  direct claim only checks "nothing in flight",
 *                        not "nothing waiting" (the key is not idle)
 *   PerKeyNoAwaitCall    callOverdue hands the key and the slot back while
 *                        the call may still be on the wire
 *   PerKeyNoRequeue      completed forgets to put a key that still has
 *                        waiting inputs back on the line
 *   PerKeyNoCloseFail    close does not fail the inputs still waiting
 */

#ifndef K
#define K 2
#endif
#ifndef N
#define N 3
#endif
#ifndef SLOTS
#define SLOTS 1
#endif
#ifndef MAXB
#define MAXB 2
#endif
#ifndef MAXQ
#define MAXQ 2
#endif

#define NI (K*N)          /* inputs in the whole model, id = key*N + seq   */
#define NC (SLOTS+K+1)    /* call records: enough for every legal call + 1 */

#ifdef BATCH_ONLY
#define DIRECT 0
#else
#define DIRECT 1
#endif

/* life of one input (one caller's request) */
#define NEW  0   /* not submitted yet                                    */
#define WAIT 1   /* accepted, sitting in its key's lane                  */
#define SENT 2   /* part of a call that has not answered it yet          */
#define DONE 3   /* the caller has its one outcome (OK, FAILED, TIMEOUT, */
                 /* REJECTED or CLOSED -- which one is not tracked)      */

byte st[NI];
bool dl[NI];     /* the caller gave a deadline that may pass             */
bool late[NI];   /* that deadline has passed; the expire event is queued */

/* lanes and the ready line */
chan lane[K] = [N] of { byte };   /* waiting inputs of each key, FIFO     */
chan line = [K] of { byte };      /* keys ready for a batch slot, FIFO    */
bool inLine[K];
byte nwait[K];                    /* = len(lane[k]), kept for the LTL     */
byte waiting;                     /* all waiting inputs (maxQueueing)     */
bool inflight[K];                 /* the lane is marked in flight         */
byte batchCalls;                  /* batch slots taken                    */
byte directCalls;

/* call records; cKind 0 = free, 1 = batch call, 2 = direct call */
byte cKind[NC];
byte cKey[NC];
byte cMem[NC];                    /* bit set of the inputs in the call    */
bool cOver[NC];                   /* the call timeout has fired           */
bool cRel[NC];                    /* key and slot already handed back     */

bool draining, closing, closedSignalled;

/* ghost state for the properties */
byte wire[K];                     /* calls of each key really running     */
byte nextSeq[K];                  /* lowest seq the key may still send    */

#define idle(k)  (!inflight[k] && nwait[k] == 0)
#define pend(x)  (st[x] == WAIT || st[x] == SENT)

/* scratch variables: every process that runs engine code declares these and
 * zeroes them at the end of each event, so they never split states */
#define SCRATCH byte dk, dx, dn, dm, cc, ck, ckind, cx
#define CLEAR   dk = 0; dx = 0; dn = 0; dm = 0; cc = 0; ck = 0; ckind = 0; cx = 0

/* hand the caller of x its single outcome */
inline answer(x) {
  assert(st[x] != DONE);          /* never a second outcome */
  st[x] = DONE
}

/* put input x on the wire; checks order and expiry */
inline send(x) {
  assert(!late[x]);               /* an expired input is never sent */
  assert(x % N >= nextSeq[x / N]);/* a key's inputs leave in order  */
  nextSeq[x / N] = x % N + 1;
  st[x] = SENT
}

inline startCall(k, mem, kind) {
  cc = 0;
  do
  :: cc < NC && cKind[cc] != 0 -> cc++
  :: else -> break
  od;
  assert(cc < NC);
  cKind[cc] = kind; cKey[cc] = k; cMem[cc] = mem;
  wire[k]++;
  assert(wire[k] <= 1);           /* never two calls in flight for one key */
  if
  :: kind == 1 -> batchCalls++; assert(batchCalls <= SLOTS)
  :: else -> directCalls++
  fi
}

/* PerKeyEngine#dispatch */
inline dispatch() {
  do
  :: !closing && batchCalls < SLOTS && len(line) > 0 ->
     line?dk; inLine[dk] = 0;
     dn = 0; dm = 0;
     do
     :: dn < MAXB && nwait[dk] > 0 ->
        lane[dk]?dx; nwait[dk]--; waiting--;
        if
        :: late[dx] -> answer(dx)          /* TIMEOUT instead of sending */
        :: else -> send(dx); dm = dm | (1 << dx); dn++
        fi
     :: else -> break
     od;
     if
     :: dn > 0 -> inflight[dk] = 1; startCall(dk, dm, 1)
     :: else -> skip                       /* everything had expired */
     fi
  :: else -> break
  od
}

inline maybeSignalClosed() {
  if
  :: closing && !closedSignalled && batchCalls + directCalls == 0 ->
     closedSignalled = 1;
     /* closed is signalled only when no call is on the wire ... */
     cx = 0;
     do
     :: cx < K -> assert(wire[cx] == 0); cx++
     :: else -> break
     od;
     /* ... and no accepted caller is still waiting for its outcome */
     cx = 0;
     do
     :: cx < NI -> assert(!pend(cx)); cx++
     :: else -> break
     od
  :: else -> skip
  fi
}

/* PerKeyEngine#admit */
inline admit(x, k) {
  if
  :: draining || closing -> answer(x)        /* CLOSED */
  :: else ->
     if
#ifdef PerKeyNoDirectGuard
     :: DIRECT && !inflight[k] ->
#else
     :: DIRECT && idle(k) ->
#endif
        /* direct claim: the lane is created already in flight */
        inflight[k] = 1; send(x); startCall(k, 1 << x, 2)
     :: else ->
        if
        :: waiting >= MAXQ -> answer(x)      /* REJECTED */
        :: else ->
           lane[k]!x; nwait[k]++; waiting++; st[x] = WAIT;
           if
           :: true -> dl[x] = 1              /* caller set a deadline */
           :: true -> skip                   /* no deadline */
           fi;
           if
           :: !inflight[k] && !inLine[k] -> line!k; inLine[k] = 1
           :: else -> skip
           fi
        fi
     fi;
     dispatch()
  fi
}

/* the key and the slot go back; part of PerKeyEngine#completed */
inline release(k, kind) {
  if
  :: kind == 1 -> batchCalls--
  :: else -> directCalls--
  fi;
  inflight[k] = 0;
  if
  :: nwait[k] > 0 ->
#ifndef PerKeyNoRequeue
     line!k; inLine[k] = 1                   /* back of the line */
#else
     skip
#endif
  :: else -> skip                            /* lane removed: key idle */
  fi;
  dispatch()
}

/* PerKeyEngine#completed: the call's future completed, back on the loop */
inline completed(c) {
  ck = cKey[c]; ckind = cKind[c];
  wire[ck]--;
  cx = ck * N;
  do
  :: cx < ck * N + N ->
     if
     :: (cMem[c] >> cx) & 1 && st[cx] == SENT -> answer(cx)  /* OK/FAILED */
     :: else -> skip
     fi;
     cx++
  :: else -> break
  od;
  if
  :: !cRel[c] ->
     cKind[c] = 0; cKey[c] = 0; cMem[c] = 0; cOver[c] = 0; cRel[c] = 0;
     release(ck, ckind)
  :: else ->
     cKind[c] = 0; cKey[c] = 0; cMem[c] = 0; cOver[c] = 0; cRel[c] = 0
  fi;
  maybeSignalClosed()
}

/* PerKeyEngine#callOverdue: callers fail now, key and slot stay held */
inline callOverdue(c) {
  cOver[c] = 1;
  ck = cKey[c]; ckind = cKind[c];
  cx = ck * N;
  do
  :: cx < ck * N + N ->
     if
     :: (cMem[c] >> cx) & 1 && st[cx] == SENT -> answer(cx)  /* FAILED */
     :: else -> skip
     fi;
     cx++
  :: else -> break
  od;
#ifdef PerKeyNoAwaitCall
  cRel[c] = 1;
  release(ck, ckind);
  maybeSignalClosed()
#else
  skip
#endif
}

/* PerKeyEngine#expire */
inline expire(x) {
  lane[x / N]??eval(x); nwait[x / N]--; waiting--;
  answer(x);                                 /* TIMEOUT */
  if
  :: nwait[x / N] == 0 && inLine[x / N] ->   /* lane emptied: leave line */
     line??eval(x / N); inLine[x / N] = 0
  :: else -> skip
  fi
}

/* PerKeyEngine#close */
inline doClose() {
  closing = 1;
#ifndef PerKeyNoCloseFail
  dk = 0;
  do
  :: dk < K ->
     do
     :: nwait[dk] > 0 -> lane[dk]?dx; nwait[dk]--; waiting--; answer(dx)
     :: else -> break
     od;
     dk++
  :: else -> break
  od;
  do
  :: len(line) > 0 -> line?dk; inLine[dk] = 0
  :: else -> break
  od;
#endif
  maybeSignalClosed()
}

#define allDone(k) (st[k*N] == DONE && st[k*N+1] == DONE && \
                    (N < 3 || st[k*N+N-1] == DONE))

/* the callers of one key: submit N inputs in order, then wait for the
 * answers. A caller stuck at the wait is a stranded caller (invalid end). */
proctype Caller(byte k) {
  SCRATCH;
  byte seq, in;
again:
  do
  :: seq < N -> atomic { in = k * N + seq; admit(in, k); seq++; in = 0; CLEAR }
  :: else -> break
  od;
#ifdef FOREVER
  /* once everything of the round is over, the same callers go again */
  atomic {
    allDone(k) && wire[k] == 0 ->
    seq = 0; nextSeq[k] = 0;
    dx = 0;
    do
    :: dx < N -> st[k*N+dx] = NEW; dl[k*N+dx] = 0; late[k*N+dx] = 0; dx++
    :: else -> break
    od;
    dx = 0
  };
  goto again
#else
  allDone(k)
#endif
}

/* the downstream side of call record c: answers or times out at any time */
proctype Call(byte c) {
  SCRATCH;
end:
  do
  :: atomic { cKind[c] != 0 -> completed(c); CLEAR }
  :: atomic { cKind[c] != 0 && !cOver[c] -> callOverdue(c); CLEAR }
  od
}

/* caller deadlines: may pass for inputs that carry one, then the timer
 * event reaches the loop (a separate step, so dispatch can see it first) */
#define TICK(x) \
  :: atomic { st[x] == WAIT && dl[x] && !late[x] -> late[x] = 1 } \
  :: atomic { st[x] == WAIT && late[x] -> expire(x); CLEAR }

proctype Clock() {
  SCRATCH;
end:
  do
  TICK(0)
  TICK(1)
  TICK(2)
  TICK(3)
#if NI > 4
  TICK(4)
  TICK(5)
#endif
#if NI > 6
  TICK(6)
  TICK(7)
  TICK(8)
#endif
  od
}

/* the application: close, drain then close, or never close */
proctype Closer() {
  SCRATCH;
  if
  :: atomic { doClose(); CLEAR }                      /* close()          */
  :: draining = 1;                                    /* drain(timeout)   */
     if
     :: atomic { waiting == 0 -> doClose(); CLEAR }   /* drained          */
     :: atomic { doClose(); CLEAR }                   /* drain timed out  */
     fi
  :: skip
  fi
}

init {
  byte i;
  atomic {
    i = 0;
    do
    :: i < K -> run Caller(i); i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < NC -> run Call(i); i++
    :: else -> break
    od;
    run Clock();
    run Closer();
    i = 0
  }
}

/* every accepted input is eventually answered */
ltl answered {
  [] ( (pend(0) -> <> !pend(0)) && (pend(1) -> <> !pend(1)) &&
       (pend(2) -> <> !pend(2)) && (pend(3) -> <> !pend(3))
#if NI > 4
       && (pend(4) -> <> !pend(4)) && (pend(5) -> <> !pend(5))
#endif
#if NI > 6
       && (pend(6) -> <> !pend(6)) && (pend(7) -> <> !pend(7))
       && (pend(8) -> <> !pend(8))
#endif
     )
}

/* every key with waiting inputs is eventually served (its lane drains) */
ltl served {
  [] ( (nwait[0] > 0 -> <> (nwait[0] == 0)) &&
       (nwait[1] > 0 -> <> (nwait[1] == 0))
#if K > 2
       && (nwait[2] > 0 -> <> (nwait[2] == 0))
#endif
     )
}
