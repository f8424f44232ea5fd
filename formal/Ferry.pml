/*
 * Ferry.pml -- model of dev.ferry.internal.StreamEngine (Ferry.make, and
 * Ferry.keyed, which runs on it).
 *
 * One bounded FIFO queue shared by every caller, up to SLOTS batch calls at
 * once, no per-key serialisation. As in PerKey.pml every engine event is one
 * atomic step of the single event loop; only the downstream calls run beside
 * it (one Call process per call record).
 *
 * Sizes (-D): C caller processes with N inputs each, QCAP = maxQueueing,
 * SLOTS = maxInFlightBatches, MAXB = maxBatchSize, MAXBW = maxBatchWeight,
 * MAXQW = maxQueuedWeight.
 *
 * Switches:
 *   NO_DELAY      maxBatchDelay = 0: the queue is due as soon as it is not
 *                 empty (default: due when full by count or weight, when the
 *                 oldest input's delay ran out, or when draining)
 *   WEIGHTS       input seq s of a caller weighs 1 + s % 2 (else 1)
 *   NO_DEADLINES  callers give no deadline
 *   FOREVER       callers go round again (the LTL checks)
 *   TARGET=name   check only the property `name` (see PerKey.pml)
 */

#ifndef C
#define C 2
#endif
#ifndef N
#define N 2
#endif
#ifndef QCAP
#define QCAP 3
#endif
#ifndef SLOTS
#define SLOTS 2
#endif
#ifndef MAXB
#define MAXB 2
#endif
#ifndef MAXBW
#define MAXBW 255
#endif
#ifndef MAXQW
#define MAXQW 255
#endif

#define NI (C*N)          /* inputs, id = caller*N + seq        */
#define NC (SLOTS+1)      /* call records: every legal call + 1 */
#if NI > 30
#error "at most 30 inputs"
#endif

#ifdef NO_DELAY
#define DELAY 0
#else
#define DELAY 1
#endif
#ifdef WEIGHTS
#define W(x) (1 + ((x) % N) % 2)
#else
#define W(x) 1
#endif

#ifdef TARGET
#define PROP(name, c) assert((c) || name != TARGET)
#define PID(v) = v
#else
#define PROP(name, c) assert((c) || name)
#define PID(v)
#endif
hidden byte slotBound PID(1), noLateSend PID(2), exactlyOnce PID(3),
  sentOnce PID(4), closeStrandsNobody PID(5), stranded PID(6), fifo PID(7),
  groupCommit PID(8), batchBound PID(9), queueBound PID(10),
  rejectOnlyWhenFull PID(11), dueOnly PID(12), refuseWhenClosed PID(13),
  workConserving PID(14), oneForming PID(15), closeSignalled PID(16),
  modelBound PID(17), drainUntilTimeout PID(18);

#define NEW  0
#define WAIT 1
#define SENT 2
#define DONE 3

byte st[NI];
bool dl[NI];      /* the caller gave a deadline that may pass      */
bool late[NI];    /* it has passed; the expire event is queued     */

/* the engine */
chan q = [NI] of { byte };   /* the queue; its bound is the engine's rule */
byte qcount;      /* queue.count                                   */
byte qweight;     /* queue.weight                                  */
/* ADR 0027: an expired input stays in the queue (DONE) until it is the
 * head, the queue is compacted or has nothing live, and takes room till then */
byte qexp;        /* Lane#expired (= Lane.Held#expired: one lane)  */
byte qexpw;       /* Lane#expiredWeight                            */
bool ripe;        /* the oldest queued input's batch delay ran out */
byte calls;       /* batchesInFlight                               */
bool draining, closing, closedSignalled;
/* ghost: the close is the drain's timeout passing; set only within that
 * event (so hidden, like the scratch variables) */
hidden byte tPassed;

bool cBusy[NC];
int  cMem[NC];    /* set of the inputs in the call                 */
bool cOver[NC];   /* call timeout fired                            */

/* ghost state for the properties */
byte wireCalls;   /* calls really running downstream               */
byte forming;     /* batches being assembled right now             */
chan arrival = [NI] of { byte };  /* waiting inputs in arrival order */
byte gW;          /* inputs in state WAIT                          */
byte gWW;         /* their weight                                  */
byte ndone[C];    /* inputs of the caller in state DONE            */

#define pend(x) (st[x] == WAIT || st[x] == SENT)
#define due     (!DELAY || draining || closing || qcount >= MAXB || qweight >= MAXBW || ripe)

/* scratch variables of the engine's events: hidden (not part of the state),
 * sound because every event is one atomic step that sets them before use */
hidden byte dx, dn, dw, cc, cx, in;
hidden int dm;
hidden byte wasClosed, hx, hn, gH, gHW;

inline setst(x, s) {
  if
  :: st[x] == WAIT -> gW--; gWW = gWW - W(x); arrival??eval(x)
  :: else -> skip
  fi;
  if
  :: s == WAIT -> gW++; gWW = gWW + W(x); arrival!x
  :: s == DONE -> ndone[x / N]++
  :: else -> skip
  fi;
  st[x] = s
}

inline answer(x) {
  PROP(exactlyOnce, st[x] != DONE);
  setst(x, DONE)
}

inline send(x) {
  PROP(noLateSend, !late[x]);
  PROP(sentOnce, st[x] == WAIT);
  PROP(fifo, arrival?[eval(x)]);   /* the oldest input still waiting */
  setst(x, SENT)
}

inline startCall(mem) {
  cc = 0;
  do
  :: cc < NC && cBusy[cc] -> cc++
  :: else -> break
  od;
  PROP(modelBound, cc < NC);
  cBusy[cc] = 1; cMem[cc] = mem;
  calls++;
  wireCalls++;
  PROP(slotBound, wireCalls <= SLOTS);
  cx = 0; dn = 0; dw = 0;
  do
  :: cx < NI -> if :: (mem >> cx) & 1 -> dn++; dw = dw + W(cx) :: else -> skip fi; cx++
  :: else -> break
  od;
  PROP(batchBound, dn >= 1 && dn <= MAXB && (dw <= MAXBW || dn == 1));
  cx = 0; dn = 0; dw = 0
}

inline dropHeld(x) {
  qexp--; qexpw = qexpw - W(x)
}

/* Lane#peek: expired entries at the head go at once */
inline dropHeads() {
  do
  :: len(q) > 0 ->
     q?<hx>;
     if
     :: st[hx] == DONE -> q?hx; dropHeld(hx)
     :: else -> break
     fi
  :: else -> break
  od;
  hx = 0
}

/* Lane#release: with nothing live, every expired entry goes */
inline releaseQueue() {
  do
  :: len(q) > 0 -> q?hx; dropHeld(hx)
  :: else -> break
  od;
  hx = 0
}

/* Lane#forget's compaction: the expired go, the live keep their order */
inline compact() {
  hn = len(q);
  do
  :: hn > 0 ->
     q?hx;
     if
     :: st[hx] == DONE -> dropHeld(hx)
     :: else -> q!hx
     fi;
     hn--
  :: else -> break
  od;
  hx = 0
}

/* ghost: the expired inputs really left in the queue, and their weight */
inline countHeld() {
  gH = 0; gHW = 0; hn = 0;
  do
  :: hn < NI ->
     if
     :: st[hn] == DONE && q??[eval(hn)] -> gH++; gHW = gHW + W(hn)
     :: else -> skip
     fi;
     hn++
  :: else -> break
  od;
  hn = 0
}

inline unqueue(x) {
  dropHeads();
  q?x; qcount--; qweight = qweight - W(x)
}

/* StreamEngine#pump and #take: a batch is cut only when a slot is free,
 * inside one event, so at most one batch is ever being formed */
inline dispatch() {
  /* with a delay, dueIn and armDelayTimer read the oldest live arrival
   * (Lane#peek) while a slot is free */
  if
  :: DELAY && !draining && !closing && calls < SLOTS && qcount > 0 -> dropHeads()
  :: else -> skip
  fi;
  do
  :: calls < SLOTS && qcount > 0 && due ->
     /* independent of the guard: full by the ghost counts, ripe, draining */
     PROP(dueOnly, !DELAY || draining || closing || gW >= MAXB || gWW >= MAXBW || ripe);
     forming++;
     PROP(oneForming, forming == 1);
     dn = 0; dm = 0; dw = 0;
     do
     :: dn < MAXB && qcount > 0 ->
        dropHeads();
        q?<dx>;
        if
        :: late[dx] -> unqueue(dx); answer(dx)        /* TIMEOUT, not sent */
        :: !late[dx] && dn > 0 && W(dx) > MAXBW - dw -> break
        :: else -> unqueue(dx); send(dx); dm = dm | (1 << dx); dn++; dw = dw + W(dx)
        fi
     :: else -> break
     od;
     /* group commit: the batch stops only at a bound or when nothing waits */
     if
     :: qcount > 0 -> arrival?<dx>           /* the oldest live input */
     :: else -> skip
     fi;
     PROP(groupCommit, qcount == 0 || dn == MAXB || (dn > 0 && W(dx) > MAXBW - dw));
     ripe = 0;                /* the next oldest input has its own delay */
     if
     :: dn > 0 -> startCall(dm)
     :: else -> skip
     fi;
     forming--
  :: else -> break
  od;
  dx = 0; dn = 0; dw = 0; dm = 0
}

inline signalIfDone() {
  if
  :: closing && !closedSignalled && calls == 0 ->
     closedSignalled = 1;
     PROP(closeStrandsNobody, wireCalls == 0);
     cx = 0;
     do
     :: cx < NI -> PROP(closeStrandsNobody, !pend(cx)); cx++
     :: else -> break
     od
  :: else -> skip
  fi
}

/* StreamEngine#close */
inline closeNow() {
  /* a drain answers no accepted input CLOSED before its timeout passed (by
   * the ghost count of waiting inputs) */
  PROP(drainUntilTimeout, !draining || tPassed || gW == 0);
  closing = 1;
  ripe = 0;
  do
  :: qcount > 0 -> unqueue(dx); answer(dx)           /* CLOSED */
  :: else -> break
  od;
  releaseQueue();                                      /* Lane#takeAll */
  dx = 0;
  signalIfDone()
}

/* EngineCore#maybeFinish */
inline maybeFinish() {
  if
  :: draining && !closing && qcount == 0 && calls == 0 -> closeNow()
  :: else -> signalIfDone()
  fi
}

/* after every event: a free slot never sits beside a due queue */
inline conserve() {
  PROP(workConserving, !(calls < SLOTS && qcount > 0 && due))
}

/* StreamEngine#admit */
inline admit(x) {
  if
  :: draining || closing -> answer(x)                          /* CLOSED   */
  :: else ->
     if
     :: qcount + qexp >= QCAP || W(x) > MAXQW - qweight - qexpw ->
        countHeld();
        PROP(rejectOnlyWhenFull, gW + gH >= QCAP || W(x) > MAXQW - gWW - gHW);
        answer(x)                                              /* REJECTED */
     :: else ->
        q!x; qcount++; qweight = qweight + W(x);
        setst(x, WAIT);
#ifndef NO_DEADLINES
        if
        :: dl[x] = 1
        :: skip
        fi;
#endif
        dispatch()
     fi
  fi;
  countHeld();
  PROP(queueBound, gW + gH <= QCAP && gWW + gHW <= MAXQW)
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
  calls--;
  cBusy[c] = 0; cMem[c] = 0; cOver[c] = 0;
  dispatch();
  maybeFinish()
}

/* EngineCore#callOverdue: callers fail now, the slot stays taken */
inline callOverdue(c) {
  cOver[c] = 1;
  answerCall(c)                               /* FAILED */
}

/* StreamEngine#expire */
inline expire(x) {
  if
  :: arrival?[eval(x)] -> ripe = 0           /* the oldest one: a new delay */
  :: else -> skip
  fi;
  qcount--; qweight = qweight - W(x);
  answer(x);                                  /* TIMEOUT */
  /* Lane#forget: it stays in the queue, held, taking room */
  qexp++; qexpw = qexpw + W(x);
  if
  :: qcount == 0 -> releaseQueue()
  :: else ->
     dropHeads();
     if
     :: qexp >= qcount -> compact()
     :: else -> skip
     fi
  fi;
  dispatch();
  maybeFinish()
}

/* StreamEngine#drain */
inline drain() {
  draining = 1;
  dispatch();
  maybeFinish()
}

proctype Caller(byte k) {
  byte seq;
again:
  do
  :: seq < N ->
     atomic {
       in = k * N + seq;
       wasClosed = draining || closing;
       admit(in);
       PROP(refuseWhenClosed, !wasClosed || st[in] == DONE);
       conserve();
       seq++
     }
  :: else -> break
  od;
#ifdef FOREVER
  atomic {
    ndone[k] == N ->
    /* the round's expired inputs still held go before their numbers are
     * used again (infinite runs; they would only take room a while longer) */
    hn = len(q);
    do
    :: hn > 0 ->
       q?hx;
       if
       :: hx / N == k -> dropHeld(hx)
       :: else -> q!hx
       fi;
       hn--
    :: else -> break
    od;
    hx = 0;
    seq = 0; ndone[k] = 0;
    dx = 0;
    do
    :: dx < N -> st[k*N+dx] = NEW; dl[k*N+dx] = 0; late[k*N+dx] = 0; dx++
    :: else -> break
    od;
    dx = 0
  };
  goto again
#endif
}

proctype Call(byte c) {
end:
  do
  :: atomic { cBusy[c] -> completed(c); conserve() }
  :: atomic { cBusy[c] && !cOver[c] -> callOverdue(c); conserve() }
  od
}

proctype Deadline(byte x) {
end:
  do
  :: atomic { st[x] == WAIT && dl[x] && !late[x] -> late[x] = 1 }
  :: atomic { st[x] == WAIT && late[x] -> expire(x); conserve() }
  od
}

/* the batch-delay timer of the oldest input (StreamEngine#delayOver) */
proctype DelayTimer() {
end:
  do
  :: atomic { DELAY && qcount > 0 && !ripe && !closing -> ripe = 1; dispatch(); conserve() }
  od
}

proctype Closer() {
  if
  :: atomic { closeNow(); conserve() }                 /* close()      */
  :: atomic { drain(); conserve() };                   /* drain(t)     */
     if
     :: atomic { !closing -> tPassed = 1; closeNow(); tPassed = 0; conserve() }  /* t passed */
     :: skip                                                  /* t never does */
     fi
  :: skip
  fi
}

proctype Auditor() {
  byte x;
  timeout ->
  atomic {
    do
    :: x < NI -> PROP(stranded, st[x] == DONE); x++
    :: else -> break
    od;
    PROP(closeSignalled, !closing || closedSignalled);
    x = 0
  }
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
#ifndef NO_DEADLINES
    i = 0;
    do
    :: i < NI -> run Deadline(i); i++
    :: else -> break
    od;
#endif
    run DelayTimer();
    run Closer();
    run Auditor();
    i = 0
  }
}

#define ANS(x) (pend(x) -> <> !pend(x))
ltl answered {
  [] ( ANS(0) && ANS(1) && ANS(2) && ANS(3)
#if NI > 4
       && ANS(4) && ANS(5)
#endif
#if NI > 6
#error "ltl answered lists 6 inputs at most"
#endif
     )
}

ltl drained {
  [] (draining -> <> closedSignalled)
}
