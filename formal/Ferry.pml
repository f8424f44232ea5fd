/*
 * Ferry.pml -- model of dev.ferry.internal.StreamEngine (Ferry.make).
 *
 * One bounded FIFO queue shared by every caller, up to SLOTS batch calls at
 * once, no per-key serialisation. As in PerKey.pml every engine event is one
 * atomic step of the single event loop; only the downstream calls run beside
 * it (one Call process per call record).
 *
 * Sizes (override with -D): C caller processes with N inputs each,
 * QCAP = queue capacity, SLOTS = maxInFlightBatches, MAXB = maxBatchSize.
 *
 * Switches:
 *   NO_DELAY               maxBatchDelay = 0: a batch leaves as soon as a
 *                          slot is free (default: a batch waits until it is
 *                          full or the oldest input's delay has run out)
 *   FOREVER                callers go round again (used for the LTL checks)
 * Deliberately broken variants (each must produce a counterexample):
 *   FerryNoExpiryCheck     dispatch sends inputs whose deadline has passed
 *   FerryNoCloseFail       close leaves the queued inputs where they are
 *   FerryOverdueFreesSlot  callOverdue gives the slot back while the call
 *                          may still be running downstream
 */

#ifndef C
#define C 2
#endif
#ifndef N
#define N 2
#endif
#ifndef QCAP
#define QCAP 2
#endif
#ifndef SLOTS
#define SLOTS 2
#endif
#ifndef MAXB
#define MAXB 2
#endif

#define NI (C*N)          /* inputs, id = caller*N + seq      */
#define NC (SLOTS+1)      /* call records: every legal call + 1 */

#ifdef NO_DELAY
#define DELAY 0
#else
#define DELAY 1
#endif

#define NEW  0
#define WAIT 1
#define SENT 2
#define DONE 3

byte st[NI];
bool dl[NI];      /* the caller gave a deadline that may pass      */
bool late[NI];    /* it has passed; the expire event is queued     */

chan q = [QCAP] of { byte };
bool ripe;        /* the oldest queued input's batch delay ran out */
byte calls;       /* slots taken                                   */

bool cBusy[NC];
byte cMem[NC];    /* bit set of inputs in the call                 */
bool cOver[NC];   /* call timeout fired                            */
bool cRel[NC];    /* slot already handed back                      */

bool draining, closing, closedSignalled;

/* ghost state for the properties */
byte wireCalls;   /* calls really running downstream                */
byte forming;     /* batches being assembled right now              */

#define pend(x) (st[x] == WAIT || st[x] == SENT)

#define SCRATCH byte dx, dn, dm, cc, cx
#define CLEAR   dx = 0; dn = 0; dm = 0; cc = 0; cx = 0

inline answer(x) {
  assert(st[x] != DONE);            /* exactly one outcome per caller */
  st[x] = DONE
}

inline send(x) {
  assert(!late[x]);                 /* an expired input is never sent */
  st[x] = SENT
}

inline startCall(mem) {
  cc = 0;
  do
  :: cc < NC && cBusy[cc] -> cc++
  :: else -> break
  od;
  assert(cc < NC);
  cBusy[cc] = 1; cMem[cc] = mem;
  calls++;
  wireCalls++;
  assert(wireCalls <= SLOTS)        /* at most maxInFlightBatches calls */
}

/* StreamEngine#dispatch: a batch is cut only when a slot is free,
 * inside one event, so at most one batch is ever being formed */
inline dispatch() {
  do
  :: !closing && calls < SLOTS && len(q) > 0 &&
     (!DELAY || len(q) >= MAXB || ripe || draining) ->
     forming++;
     assert(forming == 1);
     dn = 0; dm = 0;
     do
     :: dn < MAXB && len(q) > 0 ->
        q?dx;
        if
#ifndef FerryNoExpiryCheck
        :: late[dx] -> answer(dx)             /* TIMEOUT, not sent */
#endif
        :: else -> send(dx); dm = dm | (1 << dx); dn++
        fi
     :: else -> break
     od;
     ripe = 0;                /* the next oldest input has its own delay */
     if
     :: dn > 0 -> startCall(dm)
     :: else -> skip
     fi;
     forming--
  :: else -> break
  od
}

inline maybeSignalClosed() {
  if
  :: closing && !closedSignalled && calls == 0 ->
     closedSignalled = 1;
     assert(wireCalls == 0);          /* nothing left on the wire      */
     cx = 0;
     do
     :: cx < NI -> assert(!pend(cx)); cx++   /* no stranded caller */
     :: else -> break
     od
  :: else -> skip
  fi
}

/* StreamEngine#admit */
inline admit(x) {
  if
  :: draining || closing -> answer(x)          /* CLOSED   */
  :: !(draining || closing) && len(q) >= QCAP -> answer(x)   /* REJECTED */
  :: !(draining || closing) && len(q) < QCAP ->
     q!x; st[x] = WAIT;
     if
     :: true -> dl[x] = 1
     :: true -> skip
     fi;
     dispatch()
  fi
}

inline answerCall(c) {
  cx = 0;
  do
  :: cx < NI ->
     if
     :: (cMem[c] >> cx) & 1 && st[cx] == SENT -> answer(cx)
     :: else -> skip
     fi;
     cx++
  :: else -> break
  od
}

/* StreamEngine#completed */
inline completed(c) {
  wireCalls--;
  answerCall(c);                              /* OK or FAILED */
  if
  :: !cRel[c] -> calls--
  :: else -> skip
  fi;
  cBusy[c] = 0; cMem[c] = 0; cOver[c] = 0; cRel[c] = 0;
  dispatch();
  maybeSignalClosed()
}

/* the call timeout: callers fail now, the slot stays taken */
inline callOverdue(c) {
  cOver[c] = 1;
  answerCall(c);                              /* FAILED */
#ifdef FerryOverdueFreesSlot
  cRel[c] = 1; calls--;
  dispatch();
  maybeSignalClosed()
#else
  skip
#endif
}

/* StreamEngine#expire */
inline expire(x) {
  q??eval(x);
  answer(x)                                   /* TIMEOUT */
}

/* StreamEngine#close */
inline doClose() {
  closing = 1;
#ifndef FerryNoCloseFail
  do
  :: len(q) > 0 -> q?dx; answer(dx)           /* CLOSED */
  :: else -> break
  od;
#endif
  maybeSignalClosed()
}

#define allDone(k) (st[k*N] == DONE && st[k*N+N-1] == DONE && \
                    (N < 3 || st[k*N+1] == DONE))

proctype Caller(byte k) {
  SCRATCH;
  byte seq, in;
again:
  do
  :: seq < N -> atomic { in = k * N + seq; admit(in); seq++; in = 0; CLEAR }
  :: else -> break
  od;
#ifdef FOREVER
  atomic {
    allDone(k) ->
    seq = 0;
    dx = 0;
    do
    :: dx < N -> st[k*N+dx] = NEW; dl[k*N+dx] = 0; late[k*N+dx] = 0; dx++
    :: else -> break
    od;
    dx = 0
  };
  goto again
#else
  allDone(k)            /* a caller left waiting here is stranded */
#endif
}

proctype Call(byte c) {
  SCRATCH;
end:
  do
  :: atomic { cBusy[c] -> completed(c); CLEAR }
  :: atomic { cBusy[c] && !cOver[c] -> callOverdue(c); CLEAR }
  od
}

#define TICK(x) \
  :: atomic { st[x] == WAIT && dl[x] && !late[x] -> late[x] = 1 } \
  :: atomic { st[x] == WAIT && late[x] -> expire(x); CLEAR }

/* deadlines and the batch-delay timer */
proctype Clock() {
  SCRATCH;
end:
  do
  :: atomic { DELAY && len(q) > 0 && !ripe -> ripe = 1; dispatch(); CLEAR }
  TICK(0)
  TICK(1)
  TICK(2)
  TICK(3)
#if NI > 4
  TICK(4)
  TICK(5)
#endif
  od
}

proctype Closer() {
  SCRATCH;
  if
  :: atomic { doClose(); CLEAR }                      /* close()         */
  :: atomic { draining = 1; dispatch(); CLEAR };      /* drain(timeout)  */
     if
     :: atomic { len(q) == 0 -> doClose(); CLEAR }    /* drained         */
     :: atomic { doClose(); CLEAR }                   /* drain timed out */
     fi
  :: skip
  fi
}

init {
  byte i;
  atomic {
    i = 0;
    do
    :: i < C -> run Caller(i); i++
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

ltl answered {
  [] ( (pend(0) -> <> !pend(0)) && (pend(1) -> <> !pend(1)) &&
       (pend(2) -> <> !pend(2)) && (pend(3) -> <> !pend(3))
#if NI > 4
       && (pend(4) -> <> !pend(4)) && (pend(5) -> <> !pend(5))
#endif
     )
}
