/*
 * Health.pml -- model of dev.ferry.verticle.HealthWatch: when a node reads
 * `degraded` by ADR 0172's stall rule (with review AQ's amendment, and ADRs
 * 0170 and 0171: the engine's count of calls past their timeout, the latch
 * set as a transition begins) and by ADR 0164's rule in calls.
 *
 * The engine is reduced to what health hears of it: inputs that arrive,
 * wait and may pass their deadline; up to SLOTS calls, each started with the
 * inputs waiting (up to MAXB, oldest first), which ends well or failed at any
 * moment, or reaches its timeout (W ticks after its start) still on the wire:
 * its callers are failed then, it keeps its slot, and it ends, failed, at any
 * later moment. Health is read at any moment. Time is a clock of ticks that
 * moves at any moment up to TMAX (never past a call's timeout that has not
 * fired); events of one tick happen in any order. Every event is one atomic
 * step: each probe call and each health read runs on the verticle's loop.
 *
 * The HealthWatch part follows the Java methods one by one (hw*: `started`,
 * `failed`, `ended`, `heldUp`, `degraded`), in the order Operations' probe
 * calls them; instants are ticks, NONE no instant, and
 * `now - longestWait > idleSince` is `oldest > idleSince` (the arrival of the
 * call's longest-waiting input). The count of calls past their timeout is
 * the engine's (the snapshot's `callsPastTimeout`, ADR 0170): the calls in
 * state 2. Each of the engine's events is one transition of the ferry, and
 * begins as Driver's does: `heldUp` is told first when a call past its
 * timeout is on the wire and inputs wait (ADR 0171). The clock's tick and a
 * health read are not transitions. The properties are stated on ghost state
 * (g*) kept from the events alone, never from HealthWatch's fields.
 *
 * Sizes (-D): N inputs in a run (at most 4), SLOTS calls at once, MAXB inputs
 * a call, W = callTimeoutMs in ticks (also the stall rule's window), TMAX the
 * last tick, AFTER = Operations.DEGRADED_AFTER.
 * Switches:
 *   DELAY         a call starts at any later moment while inputs wait with a
 *                 slot free (a batch delay); without it the engine starts one
 *                 as soon as an input waits beside a free slot
 *   TARGET=name   check only the property `name` (see PerKey.pml)
 */

#ifndef N
#define N 3
#endif
#ifndef SLOTS
#define SLOTS 1
#endif
#ifndef MAXB
#define MAXB 2
#endif
#ifndef W
#define W 2
#endif
#ifndef TMAX
#define TMAX 6
#endif
#ifndef AFTER
#define AFTER 5
#endif
#if N > 4
#error "at most 4 inputs"
#endif
#if TMAX > 250
#error "instants are bytes"
#endif

#ifdef TARGET
#define PROP(name, c) assert((c) || name != TARGET)
#define PID(v) = v
#else
#define PROP(name, c) assert((c) || name)
#define PID(v)
#endif
hidden byte noFlap PID(1), needsWork PID(2), needsTime PID(3),
  detectsHung PID(4), detectsSecond PID(5), inCalls PID(6), wellFormed PID(7),
  heldLatches PID(8);

#define NONE 255

byte now;                       /* the clock                                   */
/* the engine, as health hears of it */
byte ist[N];                    /* input: 0 not arrived, 1 waiting, 2 sent or gone */
byte arr[N];                    /* its arrival                                 */
byte cst[SLOTS];                /* call: 0 free, 1 on the wire, 2 past its timeout */
byte cat[SLOTS];                /* its start                                   */
byte cto[SLOTS];                /* when it passed its timeout                  */
byte narr;                      /* inputs arrived                              */

/* HealthWatch's fields */
byte inARow, inFlight, failures;
byte since = NONE, idleSince = NONE;
bool tripped;

/* ghost: ADR 0172's stall from the events alone
 *   a stall begins at a failed call (callers failed) and ends at a call that
 *   ends well, or at an idle gap: a call that starts on an empty wire while
 *   none of the inputs that waited when the wire last emptied still waits,
 *   unless the stall read degraded by the rule in time (gDownT), or held two
 *   failures and had the window of work when the wire emptied (review AQ).
 *   gWork counts the stall's ticks with work: a call on the wire, or an empty
 *   wire with an input waiting that already waited when it emptied. An input
 *   that arrives in the very tick the wire emptied counts as waiting then
 *   (the code's instants cannot order the two). */
bool gDown;                     /* read degraded, no call served since         */
bool gDownT;                    /* degraded by the rule in time in this stall, at
                                   a read or as a transition began (ADR 0171) */
bool gHeld;                     /* a call held past its timeout for the window with
                                   inputs waiting in the stall, none served since */
byte gF;                        /* failed calls of the stall                   */
byte gInARow;                   /* failed calls since the last served          */
bool gStall;
byte gWork, gWorkAtEmpty;       /* the stall's ticks of work; at the last emptying */
bool gOld[N];                   /* waited when the wire last emptied, waits still */
byte gEmptyAt = NONE;           /* when the wire last emptied                  */
byte gOnWire;                   /* calls on the wire (cst != 0)                */

hidden byte i, c, oa, taken, stalled;
hidden byte deg, viaCalls, waiting, gap;

#if N == 1
#define WAITING (ist[0] == 1)
#define ANYOLD  (gOld[0])
#elif N == 2
#define WAITING (ist[0] == 1 || ist[1] == 1)
#define ANYOLD  (gOld[0] || gOld[1])
#elif N == 3
#define WAITING (ist[0] == 1 || ist[1] == 1 || ist[2] == 1)
#define ANYOLD  (gOld[0] || gOld[1] || gOld[2])
#else
#define WAITING (ist[0] == 1 || ist[1] == 1 || ist[2] == 1 || ist[3] == 1)
#define ANYOLD  (gOld[0] || gOld[1] || gOld[2] || gOld[3])
#endif
#if SLOTS == 1
#define SLOT_FREE (cst[0] == 0)
#define ANY_CALL(P) (P(0))
#else
#define SLOT_FREE (cst[0] == 0 || cst[1] == 0)
#define ANY_CALL(P) (P(0) || P(1))
#endif

#define OVERDUE(c) (cst[c] == 2)
/* the snapshot's callsPastTimeout() > 0 (ADR 0170) */
#define PAST_TIMEOUT ANY_CALL(OVERDUE)

/* ---- HealthWatch ------------------------------------------------------------ */
/* the stall's latch, set by degraded() and by heldUp() (one macro, so that a
   mutant can take both away: the rule before review AQ) */
#define LATCH(d) tripped = (d)
#define NEEDS_WAITS (inFlight == 0 && idleSince != NONE && since != NONE)
#define DEGRADED_WHILE_IDLE (tripped || (failures >= 2 && idleSince - since >= W))
/* stalledNanos: the stall's time stops while the wire is empty */
inline hwStalled() {
  if
  :: since == NONE -> stalled = 0
  :: since != NONE && inFlight == 0 && idleSince != NONE -> stalled = idleSince - since
  :: else -> stalled = now - since
  fi
}

inline hwStarted(oldest) {
  if
  :: NEEDS_WAITS && oldest > idleSince && !DEGRADED_WHILE_IDLE ->
     since = NONE; failures = 0; tripped = false
  :: else
  fi;
  idleSince = NONE;
  inFlight++
}
inline hwFailed() {
  if :: inARow < 250 -> inARow++ :: else fi;
  if :: since == NONE -> since = now :: else fi;
  if :: failures < 250 -> failures++ :: else fi
}
inline hwEnded(ok) {
  if :: inFlight > 0 -> inFlight-- :: else fi;
  if :: ok -> inARow = 0; since = NONE; failures = 0; tripped = false :: else fi;
  if :: inFlight == 0 -> idleSince = now :: else fi
}
/* told as a transition begins while a call past its timeout holds the wire
   and inputs wait (ADR 0171): the rule in time judged at that instant */
inline hwHeldUp() {
  if
  :: !tripped && since != NONE ->
     hwStalled();
     if :: stalled >= W -> LATCH(true) :: else fi
  :: else
  fi
}
inline hwDegraded() {           /* waiting: queuedInputs() > 0, asked only when it decides */
  viaCalls = (inARow >= AFTER);
  deg = viaCalls || tripped;
  if
  :: !deg ->
     hwStalled();
     if
     :: stalled >= W ->
        deg = (failures >= 2 || (PAST_TIMEOUT && waiting));
        LATCH(deg)
     :: else
     fi
  :: else
  fi
}

/* ---- the engine's events and their ghost -------------------------------- */
inline gFail() {
  if :: !gStall -> gStall = true; gF = 0; gWork = 0; gDownT = false :: else fi;
  gF++;
  gInARow++
}
inline gServed() {
  gStall = false; gF = 0; gWork = 0; gDownT = false; gDown = false; gInARow = 0;
  gHeld = false
}
inline callGone() {             /* a call leaves the wire */
  gOnWire--;
  if
  :: gOnWire == 0 ->
     gEmptyAt = now; gWorkAtEmpty = gWork;
     i = 0;
     do
     :: i < N -> gOld[i] = (ist[i] == 1); i++
     :: else -> break
     od
  :: else
  fi
}

/* dispatch: a free slot takes the waiting inputs, oldest first, up to MAXB */
inline startCall() {
  c = 0;
  do
  :: c < SLOTS - 1 && cst[c] != 0 -> c++
  :: else -> break
  od;
  PROP(wellFormed, cst[c] == 0);
  /* the ghost idle gap */
  gap = (gOnWire == 0 && gStall && !ANYOLD);
  if
  :: gap && !gDownT && !(gF >= 2 && gWorkAtEmpty >= W) ->
     gStall = false; gF = 0; gWork = 0
  :: else
  fi;
  oa = NONE; taken = 0; i = 0;
  do
  :: i < N && taken < MAXB ->
     if
     :: ist[i] == 1 ->
        if :: oa == NONE -> oa = arr[i] :: else fi;
        ist[i] = 2; gOld[i] = false; taken++
     :: else
     fi;
     i++
  :: else -> break
  od;
  hwStarted(oa);
  cst[c] = 1; cat[c] = now; gOnWire++
}

#ifdef DELAY
#define dispatch() skip
#else
inline dispatch() {
  do
  :: SLOT_FREE && WAITING -> startCall()
  :: else -> break
  od
}
#endif

/* the clock may not pass a timeout that has not fired */
#define TIMEOUT_DUE(c) (cst[c] == 1 && now >= cat[c] + W)
#define NO_TIMEOUT_DUE (!ANY_CALL(TIMEOUT_DUE))
#define OVERDUE_WAITED(c) (cst[c] == 2 && now >= cto[c] + W)

/* Driver's beforeTransition: the state since the last transition, told
   before this one changes it; the ghost counts the stall as judged then */
inline transition() {
  if
  :: PAST_TIMEOUT && WAITING ->
     hwHeldUp();
     if :: gStall && gWork >= W -> gDownT = true :: else fi
  :: else
  fi
}

/* the ghost of ADR 0171's point, looked at after every event */
inline gLook() {
  if
  :: WAITING && gStall && ANY_CALL(OVERDUE_WAITED) -> gHeld = true
  :: else
  fi
}

inline invariants() {
  gLook();
  PROP(wellFormed, inFlight == gOnWire &&
       (since == NONE) == (failures == 0) && (idleSince == NONE || inFlight == 0) &&
       (!tripped || since != NONE))
}

inline read() {
  waiting = WAITING;
  hwDegraded();
  /* once degraded, degraded until a call is served (AQ) */
  PROP(noFlap, !gDown || deg);
  /* a call held past its timeout for the window with inputs waiting, read or
     not then: degraded until a call is served (ADR 0171) */
  PROP(heldLatches, !gHeld || deg);
  /* the rule in calls */
  PROP(inCalls, viaCalls == (gInARow >= AFTER));
  if
  :: deg && !viaCalls ->
     /* no alarm without work held up: it read so before in this stall (or a
        transition began with the rule met), or two failures in it, or a call
        held past its timeout with inputs behind */
     PROP(needsWork, gDownT || gF >= 2 ||
          (ANY_CALL(OVERDUE) && waiting));
     /* nor before the stall had the window of work */
     PROP(needsTime, gStall && gWork >= W);
     gDownT = true
  :: else
  fi;
  if
  :: !deg ->
     /* a call held past its timeout for the window, inputs waiting, the
        stall not ended since: degraded (2 x callTimeoutMs from its start) */
     PROP(detectsHung, !(waiting && gStall &&
          ANY_CALL(OVERDUE_WAITED)));
     /* two failures and the window of work, a call on the wire: degraded */
     PROP(detectsSecond, !(gStall && gF >= 2 && gWork >= W && gOnWire > 0))
  :: else
  fi;
  if :: deg -> gDown = true :: else fi
}

/* the events of one input or call slot */
#define EXPIRE(x) \
  :: atomic { ist[x] == 1 -> transition(); ist[x] = 2; gOld[x] = false; invariants() }
#define CALL_EVENTS(x) \
  /* a call on the wire ends: served, or failed before its timeout */ \
  :: atomic { cst[x] == 1 -> transition(); hwEnded(true); gServed(); cst[x] = 0; callGone(); \
              dispatch(); invariants() } \
  :: atomic { cst[x] == 1 -> transition(); hwFailed(); gFail(); hwEnded(false); cst[x] = 0; callGone(); \
              dispatch(); invariants() } \
  /* its timeout: its callers failed, the call keeps its slot */ \
  :: atomic { TIMEOUT_DUE(x) -> transition(); hwFailed(); gFail(); cst[x] = 2; cto[x] = now; \
              invariants() } \
  /* a call past its timeout ends, either way not well */ \
  :: atomic { cst[x] == 2 -> transition(); hwEnded(false); cst[x] = 0; callGone(); \
              dispatch(); invariants() }

active proctype Node() {
end:
  do
  /* an input arrives (a direct call if a slot is free) */
  :: atomic {
       narr < N ->
       transition();
       ist[narr] = 1; arr[narr] = now;
       gOld[narr] = (gOnWire == 0 && gEmptyAt == now && gStall);
       narr++;
       dispatch(); invariants()
     }
  /* a waiting input passes its deadline */
  EXPIRE(0)
#if N > 1
  EXPIRE(1)
#endif
#if N > 2
  EXPIRE(2)
#endif
#if N > 3
  EXPIRE(3)
#endif
#ifdef DELAY
  :: atomic { SLOT_FREE && WAITING -> transition(); startCall(); invariants() }
#endif
  CALL_EVENTS(0)
#if SLOTS > 1
  CALL_EVENTS(1)
#endif
  /* health is read */
  :: atomic { true -> read(); invariants() }
  /* time moves on */
  :: atomic {
       now < TMAX && NO_TIMEOUT_DUE ->
       if
       :: gStall && (gOnWire > 0 || ANYOLD) -> gWork++
       :: else
       fi;
       now++;
       gLook()
     }
  od
}
