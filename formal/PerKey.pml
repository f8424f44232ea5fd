/*
 * PerKey.pml -- model of dev.ferry.internal.PerKeyEngine (Ferry.perKey).
 *
 * The engine lives on one Vert.x event loop, so every engine event is one
 * atomic step here: admit, completed, callOverdue, expire, delayOver, drain,
 * close, handOff (dispatch always runs at the end of another event). The
 * downstream call is the only thing that runs beside the loop: each call
 * record has its own Call process that may report completion (or the call
 * timeout) at any moment. docs/verification.md maps every step to its Java
 * method and lists what the model leaves out.
 *
 * Sizes (-D): K keys, N inputs per key (one caller per key submits them in
 * order; NX < N: the keys other than key 0 submit only NX, and NZ <= NX:
 * keys 2..K-1 submit only NZ), SLOTS = maxInFlightBatches, MAXB =
 * maxBatchSize, MAXQ = maxQueueing, MAXBW = maxBatchWeight, MAXQW =
 * maxQueuedWeight. At most 4 keys: the fourth is there for ADR 0196, whose
 * branch needs a call of a key that is in neither line (see `PerKey adaptive
 * idle line behind` in formal/check).
 *
 * Switches:
 *   BATCH_ONLY   direct calls off (directIdleKeys = false)
 *   DELAY        a positive maxBatchDelay: a lane waits in the engine until it
 *                is full or its delay timer fires (turns direct calls off)
 *   WEIGHTS      input seq s of a key weighs 1 + s % 2 (else every input 1)
 *   NO_DEADLINES callers give no deadline (smaller state space)
 *   NO_CLOSE     the application never closes nor drains (a narrower scenario,
 *                for the dispatch rules alone)
 *   HANDOFF      the cluster layer may hand key 0 to another node at any time
 *   OWNER        the owner closes too (EngineCore#ownerClosing): a drain, and
 *                once closed the calls still in flight are abandoned, their
 *                callers answered FAILED, their completions ignored
 *   FOREVER      callers start a new round once all their answers are in, so
 *                runs are infinite (the LTL checks)
 *   TARGET=name  check only the property `name` (formal/mutants uses this so
 *                that a mutant counts as refuted only by the property it
 *                targets); LTL runs name theirs with pan -N
 *   EXCEPT=name  check every property but `name` (one the code is known to
 *                break, run on its own as an expected failure: ADR 0081)
 *   REACH        assert that ADR 0196's branch (a remembered key's new lane
 *                kept idle because the idle line is behind the busy line) is
 *                never taken: `branchTaken`, which a run that reaches it fails
 *                (formal/check runs it as an expected failure, so a change
 *                that makes the branch unreachable again is seen)
 *
 * Every property is a PROP(name, condition): an assertion whose failure
 * message carries the name (formal/check matches it). The names are listed
 * with their meaning in docs/verification.md.
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
#define MAXQ 3
#endif
#ifndef MAXBW
#define MAXBW 255
#endif
#ifndef MAXQW
#define MAXQW 255
#endif

#ifndef NX
#define NX N
#endif
#if NX > N
#error "NX (inputs of keys 1..K-1) is at most N"
#endif
#ifndef NZ
#define NZ NX
#endif
#if NZ > NX
#error "NZ (inputs of keys 2..K-1) is at most NX"
#endif
#define NIN(k) ((k) == 0 -> N : ((k) == 1 -> NX : NZ)) /* inputs key k submits */
#define NI (K*N)          /* inputs in the whole model, id = key*N + seq    */
#define NC (SLOTS+K+1)    /* call records: every legal call + 1             */
#define LINECAP (K+NI)    /* the line, stale entries of retired lanes too   */
#if NI > 30
#error "at most 30 inputs (call members are a 32-bit set)"
#endif
#if K > 4
#error "at most 4 keys (the stale-entry checks of the lines list them)"
#endif
#if defined(ADAPTIVE) && defined(FOREVER)
#error "ADAPTIVE runs are finite: admission numbers (tags) would grow without bound"
#endif

#if defined(BATCH_ONLY) || defined(DELAY)
#define DIRECT 0
#else
#define DIRECT 1
#endif
#ifdef DELAY
#define HASDELAY 1
#else
#define HASDELAY 0
#endif
#ifdef WEIGHTS
#define W(x) (1 + ((x) % N) % 2)
#else
#define W(x) 1
#endif

/* ---- property names (see the header) ------------------------------------ */
#ifdef TARGET
#define PROP(name, c) assert((c) || name != TARGET)
#define PID(v) = v
#elif defined(EXCEPT)
/* every property but EXCEPT (a known failure of the code, run on its own) */
#define PROP(name, c) assert((c) || name == EXCEPT)
#define PID(v) = v
#else
#define PROP(name, c) assert((c) || name)
#define PID(v)
#endif
hidden byte oneCallPerKey PID(1), keyOrder PID(2), slotBound PID(3),
  noLateSend PID(4), exactlyOnce PID(5), sentOnce PID(6),
  closeStrandsNobody PID(7), stranded PID(8), fairTurns PID(9),
  groupCommit PID(10), batchBound PID(11), queueBound PID(12),
  rejectOnlyWhenFull PID(13), idleDirect PID(14), refuseWhenClosed PID(15),
  workConserving PID(16), handOffAfterCall PID(17), noCallWhileHanding PID(18),
  handOffKeepsAll PID(19), closeSignalled PID(20), modelBound PID(21),
  dueOnly PID(22), directBound PID(23), limitBound PID(24),
  idleBound PID(25), oldestFirst PID(26), noStarvation PID(27),
  lineFifo PID(28), idleShare PID(29), heldGone PID(30), handOffEnds PID(31),
  idleInputs PID(32), idleClass PID(33), drainUntilTimeout PID(34),
  oneHeadStart PID(35), placeKept PID(36), branchTaken PID(37);

/* life of one input (one caller's request) */
#define NEW  0   /* not submitted yet                                       */
#define WAIT 1   /* accepted, waiting in its key's lane                     */
#define SENT 2   /* part of a call that has not answered it yet             */
#define DONE 3   /* the caller has its one outcome (OK, FAILED, TIMEOUT,    */
                 /* REJECTED, CLOSED, or handed to the key's new owner)     */

byte st[NI];
bool dl[NI];     /* the caller gave a deadline that may pass                */
bool late[NI];   /* that deadline has passed; the expire event is queued    */

/* the engine: lanes, the ready line, counts */
chan lane[K] = [N] of { byte };   /* waiting inputs of each key, FIFO, and   */
                                  /* the expired ones it still holds (DONE)  */
chan line = [LINECAP] of { byte };/* keys ready for a batch slot, FIFO       */
bool inLine[K];                   /* the key's live lane is in the line      */
byte stale[K];                    /* line entries of the key's retired lanes */
byte nwait[K];                    /* Lane#count                              */
byte wwait[K];                    /* Lane#weight                             */
byte waiting;                     /* queuedInputs                            */
byte qweight;                     /* queuedWeight                            */
bool inflight[K];                 /* Lane#inFlight                           */
byte batchCalls;                  /* batchesInFlight                         */
byte directCalls;                 /* directInFlight                          */
bool draining, closing, closedSignalled;
/* ghost: the close is the drain's timeout passing; set only within that
 * event (so hidden, like the scratch variables) */
hidden byte tPassed;
bool ownerClosing;                /* EngineCore#ownerClosing                 */
bool forgotten;                   /* EngineCore#callsForgotten               */
bool handing[K];                  /* Lane#handOffs != null                   */
bool moved[K];                    /* the key was handed to another node      */
/* ADR 0027: an expired input stays in its lane until it is the head, the lane
 * is compacted or retires, and counts toward the waiting room until then */
byte hexp[K];                     /* Lane#expired                            */
byte hwt[K];                      /* Lane#expiredWeight                      */
byte heldN;                       /* Lane.Held#expired                       */
byte heldW;                       /* Lane.Held#expiredWeight                 */

/* call records; cKind 0 = free, 1 = batch call, 2 = direct call */
byte cKind[NC];
byte cKey[NC];
int  cMem[NC];                    /* set of the inputs in the call           */
bool cOver[NC];                   /* the call timeout has fired              */
bool cRel[NC];                    /* key and slot already handed back        */

/* ghost state: kept apart from the engine's own counters */
byte wire[K];                     /* calls of each key really running        */
byte wireB;                       /* batch calls really running              */
byte nextSeq[K];                  /* lowest seq the key may still send       */
byte passed[K];                   /* keys dispatched while this one waited   */
byte ahead[K];                    /* keys in line when this one joined it    */
byte gW;                          /* inputs in state WAIT                    */
byte gWW;                         /* their weight                            */
byte ndone[K];                    /* inputs of the key in state DONE         */
bool ripe[K];                     /* the lane's delay timer fired            */
byte wireD;                       /* direct calls really running             */
byte wireAll;                     /* all calls really running                */

/* adaptive dispatch (ADR 0011): the limit, the busy line, the grant rule */
byte limit = SLOTS;               /* CallLimit#limit, in [1, SLOTS]; init may */
                                  /* start it at 1 (a learned limit)         */
chan busyq = [LINECAP] of { byte, byte }; /* (tag, key), smallest tag first */
bool inBusy[K];                   /* the key's live lane is in the busy line */
byte staleB[K];                   /* busy-line entries of retired lanes      */
byte tagOf[K];                    /* Lane#tag                                */
byte tagIn[K];                    /* Lane#tagged: the input its tag names    */
bool laneIdle[K];                 /* Lane#idle: joins the idle line          */
byte idleCredit = 1;              /* PerKeyEngine#idleCredit (ADR 0014)      */
byte admSeq;                      /* Entry#seq of the next input             */
byte adm[NI];                     /* Entry#seq of each input                 */
/* ghost for the adaptive properties */
byte idleRun;                     /* idle grants over busy since a busy one  */
byte idleIn;                      /* inputs those idle grants carried         */
byte lastBusy = 1;                /* inputs of the last busy grant           */
byte over[K];                     /* grants to others since the lane joined  */
byte bnd[K];                      /* P5: at most B + (B + 1) x MAXB of them  */
/* by the inputs' states and the calls on the wire, apart from the engine's
 * laneIdle, tagOf and credit branch (the review of 3 December 2026 found
 * mutants of those that the properties, reading them, could not see) */
bool gIdle[K];                    /* the lane began with its key idle and    */
                                  /* no call of the key has ended since      */
hidden byte gTag[K];              /* at a busy grant, each key's next input's */
                                  /* admission number (its first input in    */
                                  /* WAIT, 255 for none), by the inputs'     */
                                  /* states, not by tagOf or tagIn           */
hidden byte tg, gi, gb, gs, gk, gq, hx, hn, gH, gHW;
/* one head start per wait (ADR 0183) */
byte grantAt[K];                  /* Lane#grantedAt: admSeq at the lane's call */
                                  /* when it was an idle grant over waiting  */
                                  /* busy lanes, 0 otherwise (read only when */
                                  /* the call ends: zeroed there)            */
byte srvAt[K];                    /* PerKeyEngine#servedOverWaiting: the     */
                                  /* key's grantedAt, 0 for no entry         */
chan srvq = [NI] of { byte, byte };/* #servedOrder: (grantedAt, key), in the */
                                  /* order noted (each grant sends an input, */
                                  /* so NI entries at most)                  */
/* ghost for oneHeadStart, by the inputs' states and the lines, apart from
 * grantAt, srvAt and srvq: the inputs that waited in the busy line at the
 * key's last grant, if that was an idle grant over them (gk), less those
 * whose lane was granted since (or that left WAIT); and the admission number
 * at the key's last idle grant over waiting busy lanes */
int hsM[K];
byte gIob[K];
/* ghost (ADR 0196): the key's lane began while an input waiting in the idle
 * line was older than every input waiting in the busy line */
bit hsX[K];
hidden byte gh, bk, sa, srvW, just; /* busyHead's tag (255: none), scratch */
hidden byte lw, ca, cb, cg;         /* setst's scratch                      */

#define idle(k)  (!inflight[k] && nwait[k] == 0)
#define ready(k) (inLine[k] || inBusy[k])
#define NBUSY (inBusy[0] || K > 1 && inBusy[1 % K] || K > 2 && inBusy[2 % K] || \
               K > 3 && inBusy[3 % K])
/* PerKeyEngine#readyLanes: live lanes in the lines (stale entries not counted) */
#define NREADY (ready(0) + ready(1 % K) * (K > 1) + ready(2 % K) * (K > 2) + \
                ready(3 % K) * (K > 3))
/* room for a direct call: fixed slots, fewer than SLOTS direct calls;
 * adaptive, calls below the limit and no lane ready */
#ifdef ADAPTIVE
#define DIRECT_ROOM (batchCalls + directCalls < limit && NREADY == 0)
#else
#define DIRECT_ROOM (directCalls < SLOTS)
#endif
#ifdef ADAPTIVE
#define ISADAPTIVE 1
#else
#define ISADAPTIVE 0
#endif
#define pend(x)  (st[x] == WAIT || st[x] == SENT)
#define due(k)   (!HASDELAY || draining || closing || nwait[k] >= MAXB || wwait[k] >= MAXBW || ripe[k])

/* scratch variables of the engine's events: hidden (not part of the state),
 * which is sound because every event is one atomic step that sets them
 * before reading them */
hidden byte dk, dx, dn, dw, cc, ck, ckind, cx, in;
hidden int dm;
hidden byte wasClosed, wasIdle, ab;

/* every change of an input's state goes through here (ghost counts) */
inline setst(x, s) {
  if
  :: st[x] == WAIT -> gW--; gWW = gWW - W(x);
#ifdef ADAPTIVE
     hsM[0] = hsM[0] & ~(1 << x); hsM[1 % K] = hsM[1 % K] & ~(1 << x);
     hsM[2 % K] = hsM[2 % K] & ~(1 << x); hsM[3 % K] = hsM[3 % K] & ~(1 << x);
     lw = 1;
#endif
  :: else -> skip
  fi;
  if
  :: s == WAIT -> gW++; gWW = gWW + W(x)
  :: s == DONE -> ndone[x / N]++
  :: else -> skip
  fi;
  st[x] = s;
#ifdef ADAPTIVE
  /* the ghost gIob is only read as "an input admitted before it waits": an
   * input that leaves WAIT never waits again and later ones come after, so
   * each gIob is kept as 1 + the newest waiting input below it (0: none),
   * the same answer in every future with fewer states */
  if
  :: lw ->
     ca = 0;
     do
     :: ca < K ->
        if
        :: gIob[ca] != 0 ->
           cg = 0; cb = 0;
           do
           :: cb < NI ->
              if
              :: st[cb] == WAIT && adm[cb] < gIob[ca] && adm[cb] >= cg -> cg = adm[cb] + 1
              :: else -> skip
              fi;
              cb++
           :: else -> break
           od;
           gIob[ca] = cg
        :: else -> skip
        fi;
        ca++
     :: else -> break
     od;
     ca = 0; cb = 0; cg = 0; lw = 0
  :: else -> skip
  fi
#endif
}

/* hand the caller of x its single outcome */
inline answer(x) {
  PROP(exactlyOnce, st[x] != DONE);
  setst(x, DONE)
}

/* put input x on the wire; checks order, expiry and single sending */
inline send(x) {
  PROP(noLateSend, !late[x]);
  PROP(sentOnce, st[x] == WAIT || st[x] == NEW);
  PROP(keyOrder, x % N >= nextSeq[x / N]);
  nextSeq[x / N] = x % N + 1;
  setst(x, SENT)
}

inline startCall(k, mem, kind) {
  PROP(noCallWhileHanding, !handing[k] && !moved[k]);
  cc = 0;
  do
  :: cc < NC && cKind[cc] != 0 -> cc++
  :: else -> break
  od;
  PROP(modelBound, cc < NC);
  cKind[cc] = kind; cKey[cc] = k; cMem[cc] = mem;
  wire[k]++;
  PROP(oneCallPerKey, wire[k] <= 1);
  wireAll++;
  if
  :: kind == 1 -> batchCalls++; wireB++
  :: else -> directCalls++; wireD++
  fi;
#ifdef ADAPTIVE
  /* ADR 0011 P1: every call counts against the limit in force */
  PROP(limitBound, wireAll <= limit && limit <= SLOTS);
#else
  PROP(slotBound, wireB <= SLOTS);
  PROP(directBound, wireD <= SLOTS);
#endif
  /* the batch bounds, counted on the call's members */
  cx = 0; dn = 0; dw = 0;
  do
  :: cx < NI -> if :: (mem >> cx) & 1 -> dn++; dw = dw + W(cx) :: else -> skip fi; cx++
  :: else -> break
  od;
  PROP(batchBound, dn >= 1 && dn <= MAXB && (dw <= MAXBW || dn == 1));
  cx = 0; dn = 0; dw = 0
}

/* an expired entry the lane held is gone: it no longer takes room */
inline dropHeld(k, x) {
  hexp[k]--; hwt[k] = hwt[k] - W(x); heldN--; heldW = heldW - W(x)
}

/* Lane#peek: expired entries at the head go at once */
inline dropHeads(k) {
  do
  :: len(lane[k]) > 0 ->
     lane[k]?<hx>;
     if
     :: st[hx] == DONE -> lane[k]?hx; dropHeld(k, hx)
     :: else -> break
     fi
  :: else -> break
  od;
  hx = 0
}

/* Lane#release: a lane with nothing live lets go of every expired entry */
inline releaseLane(k) {
  do
  :: len(lane[k]) > 0 -> lane[k]?hx; dropHeld(k, hx)
  :: else -> break
  od;
  hx = 0
}

/* Lane#forget's compaction: every expired entry goes, the live keep their order */
inline compact(k) {
  hn = len(lane[k]);
  do
  :: hn > 0 ->
     lane[k]?hx;
     if
     :: st[hx] == DONE -> dropHeld(k, hx)
     :: else -> lane[k]!hx
     fi;
     hn--
  :: else -> break
  od;
  hx = 0
}

/* ghost: the expired inputs really left in the lanes, and their weight */
inline countHeld() {
  gH = 0; gHW = 0; hn = 0;
  do
  :: hn < NI ->
     if
     :: st[hn] == DONE && lane[hn / N]??[eval(hn)] -> gH++; gHW = gHW + W(hn)
     :: else -> skip
     fi;
     hn++
  :: else -> break
  od;
  hn = 0
}

/* a lane leaves the engine (Lane#retired); an entry in the line goes stale */
inline retire(k) {
  ripe[k] = 0;
  releaseLane(k);
  if
  :: inLine[k] ->
#ifndef FOREVER
     stale[k]++;
#else
     /* infinite runs could pile up stale entries without bound while every
      * slot stays busy: there the entry goes at once, which dispatch cannot
      * tell apart (a stale entry is skipped without taking a slot) */
     line??eval(k);
#endif
     inLine[k] = 0; passed[k] = 0; ahead[k] = 0;
     cc = 0;
     do
     :: cc < K -> ahead[cc] = ahead[cc] & ~(1 << k); cc++
     :: else -> break
     od;
     cc = 0
  :: inBusy[k] ->
#ifndef FOREVER
     staleB[k]++;
#else
     busyq??eval(tagOf[k]),eval(k);
#endif
     inBusy[k] = 0
  :: else -> skip
  fi
}

/* PerKeyEngine#offer: in line when due, else its delay timer runs */
inline offer(k) {
  /* dueIn reads the oldest live arrival (Lane#peek) when a delay may apply */
  if
  :: HASDELAY && !draining && !closing && !inflight[k] && !ready(k) && nwait[k] > 0 &&
     nwait[k] < MAXB && wwait[k] < MAXBW -> dropHeads(k)
  :: else -> skip
  fi;
  if
  :: !ready(k) && !inflight[k] && nwait[k] > 0 && due(k) ->
     /* with a delay, a lane joins the line only when full (by the ghost
      * count of its waiting inputs), late enough, or draining */
     cc = k * N; dn = 0; dw = 0;
     do
     :: cc < k * N + N -> if :: st[cc] == WAIT -> dn++; dw = dw + W(cc) :: else -> skip fi; cc++
     :: else -> break
     od;
     PROP(dueOnly, !HASDELAY || draining || closing || ripe[k] || dn >= MAXB || dw >= MAXBW);
     cc = 0; dn = 0; dw = 0;
#ifdef ADAPTIVE
     /* a busy lane's tag is its live head's number (lane.peek().seq, which
      * drops expired heads); tg: the live head, by the ghost state */
     if
     :: !laneIdle[k] -> dropHeads(k)
     :: else -> skip
     fi;
     tg = k * N;
     do
     :: st[tg] != WAIT -> tg++
     :: else -> break
     od;
     /* P5: B = the inputs waiting now that were admitted before its tag */
     cc = 0; dn = 0;
     do
     :: cc < NI -> if :: st[cc] == WAIT && adm[cc] < adm[tg] -> dn++ :: else -> skip fi; cc++
     :: else -> break
     od;
     bnd[k] = dn + (dn + 1) * MAXB; over[k] = 0; cc = 0; dn = 0;
     /* the idle line only for a lane begun while its key was idle and not
      * called since (by the ghost gIdle); such a lane may be busy by ADR
      * 0183, which admit checks against the ghost gIob */
     PROP(idleClass, !laneIdle[k] || gIdle[k]);
     if
     :: !laneIdle[k] ->
        tagIn[k] = tg;
        tagOf[k] = adm[tg];
        busyq!!tagOf[k],k; inBusy[k] = 1              /* ordered by its tag */
     :: else ->
        line!k; inLine[k] = 1                          /* the idle line, FIFO */
     fi;
#else
     cc = 0; ahead[k] = 0;
     do
     :: cc < K -> if :: inLine[cc] -> ahead[k] = ahead[k] | (1 << cc) :: else -> skip fi; cc++
     :: else -> break
     od;
     cc = 0;
     line!k; inLine[k] = 1            /* the back of the line */
#endif
     tg = 0
  :: else -> skip
  fi
}

/* take the waiting input at the head of lane k out of the counts */
inline unqueue(k, x) {
  dropHeads(k);
  lane[k]?x; nwait[k]--; wwait[k] = wwait[k] - W(x);
  waiting--; qweight = qweight - W(x)
}

/* PerKeyEngine#retagBusyHead: while the busy head's tagged input is not its
 * next one (Lane#peek, which drops expired heads), the head takes its next
 * input's number and its place; stale entries that come to the head are
 * skipped (skipStale). t, q: scratch for the head's (tag, key) */
inline retagBusyHead(t, q) {
  do
  :: len(busyq) > 0 ->
     busyq?<t,q>;
     if
     :: staleB[q] > 0 -> busyq?t,q; staleB[q]--
     :: else ->
        dropHeads(q); lane[q]?<hx>;
        if
        :: hx != tagIn[q] -> busyq?t,q; tagIn[q] = hx; tagOf[q] = adm[hx]; busyq!!tagOf[q],q
        :: else -> break
        fi
     fi
  :: else -> break
  od
}

/* PerKeyEngine#busyHead (ADR 0183): both lines' stale heads skipped
 * (skipStale) and the busy head's tag renewed; gh = that tag, 255 when the
 * busy line is empty, and then every remembered key is forgotten; else the
 * entries whose grant the head was admitted after go, in the order they were
 * noted, up to the first that stays (#servedOrder: in the order the calls
 * ended, so an entry behind a later grant's waits for it). Lazy, as in the
 * code: entries go only when the engine reads the busy head for this rule,
 * at the end of a call that lets go of a lane granted over waiting busy
 * lanes, and at the admission that makes a new lane */
inline busyHead() {
  do
  :: len(line) > 0 && (line?[eval(0)] && stale[0] > 0 || line?[eval(1)] && stale[1] > 0 ||
                       K > 2 && line?[eval(2)] && stale[2 % K] > 0 ||
                       K > 3 && line?[eval(3)] && stale[3 % K] > 0) ->
     line?bk; stale[bk]--
  :: else -> break
  od;
  retagBusyHead(gh, bk);
  hx = 0;
  if
  :: len(busyq) == 0 ->
     do
     :: len(srvq) > 0 -> srvq?gh,bk
     :: else -> break
     od;
     srvAt[0] = 0; srvAt[1 % K] = 0; srvAt[2 % K] = 0; srvAt[3 % K] = 0;
     gh = 255
  :: else ->
     busyq?<gh,bk>;
     do
     :: len(srvq) > 0 ->
        srvq?<sa,bk>;
        if
        :: sa <= gh -> srvq?sa,bk; srvAt[bk] = (srvAt[bk] == sa -> 0 : srvAt[bk])
        :: else -> break
        fi
     :: else -> break
     od
  fi;
  bk = 0; sa = 0
}

/* PerKeyEngine#noteServedOverWaiting: a lane let go of after its call (no
 * input left) is remembered if that call was an idle grant over waiting busy
 * lanes and an input admitted before it waits in the busy line */
inline noteServed(k) {
  if
  :: grantAt[k] != 0 ->
     busyHead();
     if
     :: gh != 255 && grantAt[k] > gh -> srvAt[k] = grantAt[k]; srvq!grantAt[k],k
     :: else -> skip
     fi;
     gh = 0
  :: else -> skip
  fi
}

/* PerKeyEngine#dispatch and #take */
#ifndef ADAPTIVE
/* fixed slots: the head of the one FIFO line, while a batch slot is free */
#define GRANT \
  :: batchCalls < SLOTS && len(line) > 0 -> \
     line?dk; \
     if \
     :: stale[dk] > 0 -> stale[dk]--            /* a retired lane: skipped */ \
     :: else -> \
        inLine[dk] = 0; \
        /* the line is first come, first served */ \
        PROP(lineFifo, ahead[dk] == 0); \
        cx = 0; \
        do \
        :: cx < K -> ahead[cx] = ahead[cx] & ~(1 << dk); cx++ \
        :: else -> break \
        od; \
        cx = 0;
#else
/* adaptive: while calls < limit, the idle line's head unless busy lanes wait
 * and the idle credit (the inputs of the last busy grant, less the inputs of
 * the idle grants made since: ADR 0014 and its addendum) is spent, else the
 * smallest tag */
#define GRANT \
  :: batchCalls + directCalls < limit && (len(line) > 0 || len(busyq) > 0) -> \
     if \
     :: len(line) > 0 && (line?[eval(0)] && stale[0] > 0 || line?[eval(1)] && stale[1] > 0 || \
                          K > 2 && line?[eval(2)] && stale[2 % K] > 0 || \
                          K > 3 && line?[eval(3)] && stale[3 % K] > 0) -> \
        line?dk; stale[dk]--                       /* a retired lane: skipped */ \
     :: len(busyq) > 0 && (busyq?[_,eval(0)] && staleB[0] > 0 || busyq?[_,eval(1)] && staleB[1] > 0 || \
                           K > 2 && busyq?[_,eval(2)] && staleB[2 % K] > 0 || \
                           K > 3 && busyq?[_,eval(3)] && staleB[3 % K] > 0) -> \
        busyq?tg,dk; staleB[dk]--; tg = 0 \
     :: else -> \
        /* the busy head's tag renewed (live entries stay, so busyq keeps \
         * the live head this branch was entered with) */ \
        retagBusyHead(tg, dk); \
        tg = 0; hx = 0; \
        gi = len(line) > 0 && (len(busyq) == 0 || idleCredit > 0); \
        PROP(idleBound, !(gi && len(busyq) > 0 && idleRun >= lastBusy)); \
        PROP(idleInputs, !(gi && len(busyq) > 0 && idleIn >= lastBusy)); \
        PROP(idleShare, !(!gi && len(line) > 0 && idleIn < lastBusy)); \
        gs = gi && len(busyq) > 0; \
        gb = !gi; \
        gk = gi && NBUSY;                  /* ghost: busy lanes wait */ \
        if \
        :: gi -> \
           line?dk; inLine[dk] = 0; \
           /* ADR 0183: no second idle grant while an input that waited in \
            * the busy line at the key's last idle grant over it still \
            * waits there, its lane not granted since (the ghost hsM) */ \
           PROP(oneHeadStart, hsM[dk] == 0 || hsX[dk]); \
           hsX[dk] = 0 \
        :: else -> \
           busyq?tg,dk; inBusy[dk] = 0; \
           /* ghost: each key's next input (the one a grant sends first, \
            * or answers TIMEOUT if its deadline passed) */ \
           cx = 0; \
           do \
           :: cx < K -> \
              gTag[cx] = 255; hn = cx * N; \
              do \
              :: hn < cx * N + N && st[hn] == WAIT -> gTag[cx] = adm[hn]; break \
              :: hn < cx * N + N && st[hn] != WAIT -> hn++ \
              :: else -> break \
              od; \
              cx++ \
           :: else -> break \
           od; \
           hn = 0; \
           cx = 0; \
           do \
           :: cx < K -> PROP(oldestFirst, !inBusy[cx] || gTag[cx] > gTag[dk]); cx++ \
           :: else -> break \
           od; \
           tg = 0 \
        fi; \
        gi = 0; \
        cx = 0; \
        do \
        :: cx < K -> \
           if \
           :: ready(cx) -> over[cx]++; PROP(noStarvation, over[cx] <= bnd[cx]) \
           :: else -> skip \
           fi; \
           cx++ \
        :: else -> break \
        od; \
        over[dk] = 0; bnd[dk] = 0;
#endif

inline dispatch() {
  do
  GRANT
        ripe[dk] = 0;
        dn = 0; dm = 0; dw = 0;
        do
        :: dn < MAXB && nwait[dk] > 0 ->
           dropHeads(dk);
           lane[dk]?<dx>;
           if
           :: dn > 0 && W(dx) > MAXBW - dw -> break   /* the next one is too heavy */
           :: else ->
              unqueue(dk, dx);
              if
              :: late[dx] -> answer(dx)               /* TIMEOUT, never sent */
              :: else -> send(dx); dm = dm | (1 << dx); dn++; dw = dw + W(dx)
              fi
           fi
        :: else -> break
        od;
        /* group commit: the batch stops only at a bound or when nothing waits */
        if
        :: nwait[dk] > 0 ->
           dx = dk * N;
           do
           :: st[dx] != WAIT -> dx++
           :: else -> break
           od
        :: else -> skip
        fi;
        PROP(groupCommit, nwait[dk] == 0 || dn == MAXB || (dn > 0 && W(dx) > MAXBW - dw));
        if
        :: dn > 0 ->
#ifndef ADAPTIVE
           /* fair turns: while a key waits in line, each other key leaves once */
           cx = 0;
           do
           :: cx < K ->
              if
              :: inLine[cx] ->
                 PROP(fairTurns, !((passed[cx] >> dk) & 1));
                 passed[cx] = passed[cx] | (1 << dk)
              :: else -> skip
              fi;
              cx++
           :: else -> break
           od;
           passed[dk] = 0;
#endif
#ifdef ADAPTIVE
           /* a busy grant lets idle lanes carry as many inputs as it does; each
            * idle grant over waiting busy lanes spends what it carries */
           if
           :: gb -> idleCredit = dn
           :: gs -> idleCredit = (idleCredit > dn -> idleCredit - dn : 0)
           :: else -> skip
           fi;
           /* ghost, apart from the credit: the busy grant, and the idle
            * grants made since while busy lanes waited */
           if
           :: gb -> lastBusy = dn; idleRun = 0; idleIn = 0
           :: gk -> idleRun++; idleIn = idleIn + dn
           :: else -> skip
           fi;
           /* Lane#grantedAt (ADR 0183): the admission number at an idle grant
            * over waiting busy lanes */
           grantAt[dk] = (gs -> admSeq : 0);
           /* ghost: a grant takes its lane's inputs out of every key's set;
            * an idle grant over waiting busy lanes (gk) sets its own to the
            * inputs waiting in the busy line, any other grant empties it */
           cx = 0;
           do
           :: cx < K -> hsM[cx] = hsM[cx] & ~(((1 << N) - 1) << (dk * N)); cx++
           :: else -> break
           od;
           hsM[dk] = 0;
           if
           :: gk ->
              /* gIob: the admission number now, kept as setst keeps it */
              gIob[dk] = 0;
              cx = 0;
              do
              :: cx < NI ->
                 if
                 :: st[cx] == WAIT && inBusy[cx / N] -> hsM[dk] = hsM[dk] | (1 << cx)
                 :: else -> skip
                 fi;
                 if
                 :: st[cx] == WAIT && adm[cx] >= gIob[dk] -> gIob[dk] = adm[cx] + 1
                 :: else -> skip
                 fi;
                 cx++
              :: else -> break
              od
           :: else -> skip
           fi;
           cx = 0;
#endif
           inflight[dk] = 1; startCall(dk, dm, 1)
        :: else -> passed[dk] = 0; releaseLane(dk)    /* all had expired: retired */
        fi
     fi
  :: else -> break
  od;
  dk = 0; dx = 0; dn = 0; dw = 0; dm = 0; gb = 0; gs = 0; gk = 0
}

/* answer the call's inputs that the call timeout has not answered yet */
inline answerCall(c) {
  cx = cKey[c] * N;
  do
  :: cx < cKey[c] * N + N ->
     if
     :: (cMem[c] >> cx) & 1 && st[cx] == SENT -> answer(cx)
     :: else -> skip
     fi;
     cx++
  :: else -> break
  od
}

/* EngineCore#maybeFinish, the owner closing: the calls in flight are given
 * up (their callers answered FAILED: they may have been applied) and
 * forgotten with their lanes (#forgetCallsInFlight) */
inline abandon() {
  ab = 0;
  do
  :: ab < NC ->
     if
     :: cKind[ab] != 0 -> answerCall(ab)            /* FAILED */
     :: else -> skip
     fi;
     ab++
  :: else -> break
  od;
  forgotten = 1;
  ab = 0;
  do
  :: ab < K ->
     if
     :: inflight[ab] ->
        inflight[ab] = 0; laneIdle[ab] = 0;
        /* a hand-off waiting on the given-up call ends with it (ADR 0127) */
        if
        :: handing[ab] -> finishHandOff(ab)
        :: else -> retire(ab)
        fi
     :: else -> skip
     fi;
     ab++
  :: else -> break
  od;
  batchCalls = 0; directCalls = 0; ab = 0
}

/* closed is signalled once, when nothing is on the wire (or the owner gave
 * up what was); nobody is left */
inline signalIfDone() {
  if
  :: closing && !closedSignalled && (batchCalls + directCalls == 0 || ownerClosing) ->
     if
     :: ownerClosing -> abandon()
     :: else -> skip
     fi;
     closedSignalled = 1;
     cx = 0;
     do
     :: cx < K -> PROP(closeStrandsNobody, wire[cx] == 0 || forgotten); cx++
     :: else -> break
     od;
     cx = 0;
     do
     :: cx < NI -> PROP(closeStrandsNobody, !pend(cx)); cx++
     :: else -> break
     od
  :: else -> skip
  fi
}

/* PerKeyEngine#close: refuse, fail every waiting input CLOSED, clear the line */
inline closeNow() {
  /* a drain answers no accepted input CLOSED before its timeout passed (by
   * the ghost count of waiting inputs) */
  PROP(drainUntilTimeout, !draining || tPassed || gW == 0);
  closing = 1;
  do
  :: len(line) > 0 -> line?dk
  :: else -> break
  od;
  do
  :: len(busyq) > 0 -> busyq?tg,dk
  :: else -> break
  od;
  dk = 0; tg = 0;
  do
  :: dk < K ->
     inLine[dk] = 0; stale[dk] = 0; passed[dk] = 0; ahead[dk] = 0;
     inBusy[dk] = 0; staleB[dk] = 0; over[dk] = 0; bnd[dk] = 0;
     do
     :: nwait[dk] > 0 -> unqueue(dk, dx); answer(dx)
     :: else -> break
     od;
     releaseLane(dk);                                /* Lane#takeAll */
     dk++
  :: else -> break
  od;
  dk = 0; dx = 0;
  signalIfDone()
}

/* EngineCore#maybeFinish */
inline maybeFinish() {
  if
  :: draining && !closing && waiting == 0 && batchCalls + directCalls == 0 -> closeNow()
  :: else -> signalIfDone()
  fi
}

/* work conservation (PerKeyEngine#brokenInvariant): a free slot never sits
 * beside a lane in line, and without a delay every lane with waiting inputs
 * is in flight or in line */
inline conserve() {
  cx = 0;
  do
  :: cx < K ->
#ifdef ADAPTIVE
     /* ADR 0011 P2: no lane is ready while calls < limit */
     PROP(workConserving, !(wireAll < limit && ready(cx) && !closing));
#else
     PROP(workConserving, !(batchCalls < SLOTS && inLine[cx]));
#endif
     PROP(workConserving, !((!HASDELAY || draining || closing) &&
                            !inflight[cx] && nwait[cx] > 0 && !ready(cx)));
     /* ADR 0027: a lane with nothing live and no call holds no expired input */
     PROP(heldGone, inflight[cx] || nwait[cx] > 0 || len(lane[cx]) == 0);
     cx++
  :: else -> break
  od;
  cx = 0
}

/* PerKeyEngine#admit */
inline admit(x, k) {
  if
  :: draining || closing -> answer(x)                 /* CLOSED */
  :: else ->
     if
     :: DIRECT && idle(k) && DIRECT_ROOM ->
        /* direct claim: the lane is created already in flight */
        inflight[k] = 1; send(x); startCall(k, 1 << x, 2)
     :: else ->
        if
        :: waiting + heldN >= MAXQ || W(x) > MAXQW - qweight - heldW ->
           countHeld();
           PROP(rejectOnlyWhenFull, gW + gH >= MAXQ || W(x) > MAXQW - gWW - gHW);
           answer(x)                                  /* REJECTED */
        :: else ->
#ifdef ADAPTIVE
           /* ghost: an input queued while its key is idle (gq, from the
            * inputs' states and the calls on the wire) begins an idle lane */
           gIdle[k] = (gq -> DIRECT : gIdle[k]);
           /* PerKeyEngine#servedWhileBusyWaits (ADR 0183): a new lane of a
            * key remembered (srvAt) goes to the busy line while the busy
            * head was admitted before its grant */
           srvW = 0;
           if
           :: DIRECT && idle(k) -> busyHead(); srvW = (gh != 255 && srvAt[k] > gh);
              /* PerKeyEngine#idleLineBehind (ADR 0196): not while the idle
               * line's head (live: busyHead skipped the stale) waits with an
               * input admitted before the busy head's */
              if
              :: srvW && len(line) > 0 ->
                 line?<bk>; dropHeads(bk);
                 if
                 :: len(lane[bk]) > 0 -> lane[bk]?<hx>; srvW = (adm[hx] >= gh)
                 :: else -> skip
                 fi;
#ifdef REACH
                 /* formal/check's run `... branch taken` expects this to fail:
                  * the branch is taken (a remembered key kept idle) */
                 PROP(branchTaken, srvW);
#endif
                 hx = 0; bk = 0
              :: else -> skip
              fi;
              gh = 0
           :: else -> skip
           fi;
           /* ghost for oneHeadStart (ADR 0196), by the inputs' states and
            * the lines: a new lane's key may have its head start again when
            * an input waiting in the idle line was admitted before every
            * input waiting in the busy line */
           if
           :: idle(k) ->
              hsX[k] = 0; just = 255; ca = 255; cx = 0;
              do
              :: cx < NI ->
                 if
                 :: st[cx] == WAIT && inLine[cx / N] && adm[cx] < just -> just = adm[cx]
                 :: else -> skip
                 fi;
                 if
                 :: st[cx] == WAIT && inBusy[cx / N] && adm[cx] < ca -> ca = adm[cx]
                 :: else -> skip
                 fi;
                 cx++
              :: else -> break
              od;
              hsX[k] = (just < ca);
              just = 0; ca = 0; cx = 0
           :: else -> skip
           fi;
#endif
           laneIdle[k] = (idle(k) -> DIRECT && !srvW : laneIdle[k]);
#ifdef ADAPTIVE
           /* ADR 0196 from below: a lane begun while its key was idle and an
            * input waiting in the idle line was admitted before every input
            * waiting in the busy line (the ghost hsX) is an idle lane. The
            * ghost reads the idle line's oldest waiting input, the code its
            * head lane's next one: the same without deadlines (the line is
            * FIFO and an idle lane's first input is its oldest), as in the
            * only run that reaches the branch (`PerKey adaptive idle line
            * behind`); an expired head could tell them apart */
           PROP(placeKept, !(DIRECT && idle(k) && hsX[k]) || laneIdle[k]);
           /* ghost: a lane begun while its key was idle joins the busy line
            * only while an input admitted before the key's last idle grant
            * over waiting busy lanes (gIob) waits in the busy line */
           if
           :: gq && DIRECT && !laneIdle[k] ->
              just = 0; cx = 0;
              do
              :: cx < NI -> just = just || st[cx] == WAIT && inBusy[cx / N] && adm[cx] < gIob[k]; cx++
              :: else -> break
              od;
              cx = 0;
              PROP(idleClass, just);
              just = 0
           :: else -> skip
           fi;
           srvW = 0;
#endif
           lane[k]!x; nwait[k]++; wwait[k] = wwait[k] + W(x);
           waiting++; qweight = qweight + W(x);
           setst(x, WAIT);
#ifndef NO_DEADLINES
           if
           :: dl[x] = 1                               /* caller set a deadline */
           :: skip                                    /* no deadline */
           fi;
#endif
           if
           :: !inflight[k] -> offer(k); dispatch()
           :: else -> skip
           fi
        fi
     fi
  fi;
  countHeld();
  PROP(queueBound, gW + gH <= MAXQ && gWW + gHW <= MAXQW)
}

/* PerKeyEngine#finishHandOff: the waiting inputs go to the new owner, in order */
inline finishHandOff(k) {
  /* only the owner's close lets one go with its call still out (ADR 0127) */
  PROP(handOffAfterCall, wire[k] == 0 || forgotten);
  do
  :: nwait[k] > 0 ->                /* every waiting input goes */
     unqueue(k, dx);
     PROP(keyOrder, dx % N >= nextSeq[k]);
     nextSeq[k] = dx % N + 1;
     answer(dx)                     /* the new owner answers it: one outcome */
  :: else -> break
  od;
  dx = 0;
  cx = k * N;
  do
  :: cx < k * N + N -> PROP(handOffKeepsAll, st[cx] != WAIT); cx++
  :: else -> break
  od;
  handing[k] = 0; moved[k] = 1;
  retire(k)
}

/* PerKeyEngine#handOff */
inline handOff(k) {
  if
  :: idle(k) -> moved[k] = 1                          /* no lane: at once */
  :: else ->
     handing[k] = 1;
     if
     :: !inflight[k] -> finishHandOff(k); dispatch(); maybeFinish()
     :: else -> skip                                  /* completed finishes it */
     fi
  fi
}

/* the key and the slot go back; part of PerKeyEngine#completed */
inline release(k, kind) {
  if
  :: kind == 1 -> batchCalls--
  :: else -> directCalls--
  fi;
  inflight[k] = 0;
  laneIdle[k] = 0;
#ifdef ADAPTIVE
  /* CallLimit#completed: the limit in force may move anywhere in [1, SLOTS] */
  if
  :: limit = 1
  :: SLOTS > 1 -> limit = 2
  :: SLOTS > 2 -> limit = 3
  fi;
#endif
  if
  :: handing[k] -> finishHandOff(k)
  :: !handing[k] && nwait[k] == 0 -> releaseLane(k)  /* lane removed: key idle */
#ifdef ADAPTIVE
     ; noteServed(k)                                 /* ADR 0183 */
#endif
  :: else -> offer(k)                                /* back of the line */
  fi;
#ifdef ADAPTIVE
  grantAt[k] = 0;                                    /* read only above */
#endif
  dispatch()                                         /* the freed slot */
}

/* PerKeyEngine#completed: the call's future completed, back on the loop */
inline completed(c) {
  ck = cKey[c]; ckind = cKind[c];
  wire[ck]--; wireAll--;
#ifdef ADAPTIVE
  gIdle[ck] = 0;                                    /* ghost: the key had a call */
#endif
  if
  :: ckind == 1 -> wireB--
  :: else -> wireD--
  fi;
  answerCall(c);                                    /* OK or FAILED */
  if
  :: !cRel[c] && !forgotten ->                      /* else callEnded: ignored */
     cKind[c] = 0; cKey[c] = 0; cMem[c] = 0; cOver[c] = 0; cRel[c] = 0;
     release(ck, ckind)
  :: else ->
     cKind[c] = 0; cKey[c] = 0; cMem[c] = 0; cOver[c] = 0; cRel[c] = 0
  fi;
  maybeFinish()                                     /* drained or closed */
}

/* EngineCore#callOverdue: callers fail now, key and slot stay held */
inline callOverdue(c) {
  cOver[c] = 1;
  answerCall(c)                                     /* FAILED */
}

/* PerKeyEngine#expire */
inline expire(x) {
  dk = x / N;
  nwait[dk]--; wwait[dk] = wwait[dk] - W(x);
  waiting--; qweight = qweight - W(x);
  answer(x);                                        /* TIMEOUT */
  /* Lane#forget: it stays in the lane, held, taking room */
  hexp[dk]++; hwt[dk] = hwt[dk] + W(x); heldN++; heldW = heldW + W(x);
  if
  :: nwait[dk] == 0 -> releaseLane(dk)              /* nothing live: all go */
  :: else ->
     dropHeads(dk);                                 /* an expired head goes */
     if
     :: hexp[dk] >= nwait[dk] -> compact(dk)
     :: else -> skip
     fi
  fi;
  if
  :: nwait[dk] == 0 && !inflight[dk] -> retire(dk)  /* stays in the line, stale */
  :: else -> skip
  fi;
  maybeFinish()
}

/* PerKeyEngine#delayOver: the lane's delay timer fired */
inline delayOver(k) {
  ripe[k] = 1;
  offer(k);
  dispatch()
}

/* PerKeyEngine#drain: no more admissions, every waiting lane is due now */
inline drain() {
  draining = 1;
  dk = 0;
  do
  :: dk < K -> offer(dk); dk++
  :: else -> break
  od;
  dk = 0;
  dispatch();
  maybeFinish()
}

/* the callers of one key: submit N inputs in order. With HANDOFF the
 * cluster layer routes key 0 elsewhere once its hand-off began (an input
 * already on its way to the loop may still reach the engine meanwhile). */
proctype Caller(byte k) {
  byte seq;
again:
  do
  :: seq < NIN(k) ->
     atomic {
       in = k * N + seq;
       wasClosed = draining || closing;
       /* idle by the ghost state: nothing of the key waiting or on the wire */
#ifdef ADAPTIVE
       adm[in] = admSeq; admSeq++;                   /* Entry#seq */
#endif
       wasIdle = (wire[k] == 0) &&
#ifdef ADAPTIVE
                 wireAll < limit && NREADY == 0;
#else
                 wireD < SLOTS;
#endif
       cx = k * N; gq = (wire[k] == 0);
       do
       :: cx < k * N + N -> wasIdle = wasIdle && st[cx] != WAIT; gq = gq && st[cx] != WAIT; cx++
       :: else -> break
       od;
       cx = 0;
       if
       :: moved[k] || handing[k] -> answer(in)       /* routed to the new owner */
       :: !moved[k] -> admit(in, k);
          PROP(refuseWhenClosed, !wasClosed || st[in] == DONE);
          PROP(idleDirect, !(DIRECT && wasIdle && !wasClosed) || st[in] == SENT);
          conserve()
       fi;
       gq = 0;
       seq++
     }
  :: else -> break
  od;
#ifdef FOREVER
  /* once everything of the round is over, the same callers go again */
  atomic {
    ndone[k] == NIN(k) && wire[k] == 0 ->
    seq = 0; nextSeq[k] = 0; ndone[k] = 0;
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

/* the downstream side of call record c: answers or times out at any time */
proctype Call(byte c) {
end:
  do
  :: atomic { cKind[c] != 0 -> completed(c); conserve() }
  :: atomic { cKind[c] != 0 && !cOver[c] -> callOverdue(c); conserve() }
  od
}

/* the deadline of input x: it may pass (if the caller gave one), then its
 * timer event reaches the loop (a separate step, so dispatch can see the
 * deadline passed before the timer runs) */
proctype Deadline(byte x) {
end:
  do
  :: atomic { st[x] == WAIT && dl[x] && !late[x] -> late[x] = 1 }
  :: atomic { st[x] == WAIT && late[x] -> expire(x); conserve() }
  od
}

/* the batch-delay timer of lane k (PerKeyEngine#delayOver): it may fire
 * at any moment while the lane waits for company */
proctype LaneTimer(byte k) {
end:
  do
  :: atomic { !closing && !draining && !inflight[k] && !ready(k) && nwait[k] > 0 ->
              delayOver(k); conserve() }
  od
}

/* the application: close, drain (then close when its timeout passes, or
 * never), or never close */
proctype Closer() {
  if
  :: atomic { closeNow(); conserve() }                 /* close()      */
  :: atomic { drain(); conserve() };                   /* drain(t)     */
     if
     :: atomic { !closing -> tPassed = 1; closeNow(); tPassed = 0; conserve() }  /* t passed */
     :: skip                                                  /* t never does */
     fi
  :: skip
  fi;
#ifdef OWNER
  /* EngineCore#ownerClosing (the verticle undeployed, Vert.x closing): a
   * drain if still open, else the close goes on; its drainTimeout passes
   * at some moment or the drain ends first */
  atomic {
    ownerClosing = 1;
    if
    :: !draining && !closing -> drain()
    :: else -> maybeFinish()
    fi;
    conserve()
  };
  if
  :: atomic { !closing -> tPassed = 1; closeNow(); tPassed = 0; conserve() }   /* drainTimeout */
  :: skip
  fi
#endif
}

/* the cluster layer: key 0 may move to another node, at any moment */
proctype Mover() {
  if
  :: atomic { !closing -> handOff(0); conserve() }
  :: skip
  fi
}

/* when nothing can move any more, every caller has its outcome */
proctype Auditor() {
  byte x;
  timeout ->
  atomic {
    do
    :: x < NI -> PROP(stranded, st[x] == DONE || st[x] == NEW && (moved[x / N] || x % N >= NIN(x / N))); x++
    :: else -> break
    od;
    PROP(closeSignalled, !closing || closedSignalled);
    /* a hand-off the engine began ends (PerKeyEngine#finishHandOff) */
    x = 0;
    do
    :: x < K -> PROP(handOffEnds, !handing[x]); x++
    :: else -> break
    od;
    x = 0
  }
}

init {
  byte i;
  atomic {
#ifdef ADAPTIVE
    /* the limit at the start: a learned one starts at 1, a pinned one at
     * its value (CallLimit.learned, .pinned) */
    if
    :: limit = SLOTS
    :: SLOTS > 1 -> limit = 1
    fi;
#endif
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
#ifndef NO_DEADLINES
    i = 0;
    do
    :: i < NI -> run Deadline(i); i++
    :: else -> break
    od;
#endif
#ifdef DELAY
    i = 0;
    do
    :: i < K -> run LaneTimer(i); i++
    :: else -> break
    od;
#endif
#ifdef HANDOFF
    run Mover();
#endif
#ifndef NO_CLOSE
    run Closer();
#endif
    run Auditor();
    i = 0
  }
}

/* every accepted input is eventually answered */
#define ANS(x) (pend(x) -> <> !pend(x))
ltl answered {
  [] ( ANS(0) && ANS(1) && ANS(2) && ANS(3)
#if NI > 4
       && ANS(4) && ANS(5)
#endif
#if NI > 6
       && ANS(6) && ANS(7) && ANS(8)
#endif
#if NI > 9 && defined(FOREVER)
#error "ltl answered lists 9 inputs at most"
#endif
     )
}

/* every key with waiting inputs is eventually served (its lane drains) */
#define SERVED(k) (nwait[k] > 0 -> <> (nwait[k] == 0))
ltl served {
  [] ( SERVED(0) && SERVED(1)
#if K > 2
       && SERVED(2)
#endif
#if K > 3
       && SERVED(3)
#endif
     )
}

/* a drain ends in closed by itself, with no drain timeout */
ltl drained {
  [] (draining -> <> closedSignalled)
}
