/*
 * Handoff.pml -- one key changing owner in a cluster, with the routing rule
 * of the code: dev.ferry.cluster.Router (nodes), ClientRouter (a routing
 * client), Views (gating until released) and PerKeyEngine#handOff (ADRs
 * 0051, 0055, 0056, 0057), with hand-backs and what came back waiting for
 * what went on after it (ADRs 0109, 0112, 0115).
 *
 * Parties: NN nodes (A = 0, B = 1; each one process: its event loop, plus a
 * process for the downstream call of its engine) and one routing client
 * (CL), which submits N inputs of the key in order. Messages between two
 * parties travel on one FIFO channel per direction, as the event bus delivers
 * one sender's requests to one address in order; across pairs anything goes.
 *
 * Membership is a list of snapshots S0, S1, S2 (members, announced nodes),
 * published by the process Env in order; each party adopts a published one
 * at its own moment (never going back). The view is the announced live nodes;
 * the key's owner in a view is its highest-ranked node (rendezvous hashing
 * for one key is a fixed ranking of the nodes). Scenarios (-D):
 *   (none)  JOIN: S0 = {A} (A owns), S1 = {A, B} (B owns). B knows no view
 *           before S1 and waits for A's release.
 *   LEAVE   A leaves gracefully: S0 = {A, B} (A owns), S1 = members {A, B},
 *           announced {B} (B owns). Once the view without A is adopted and
 *           released everywhere and A handed its key over, A refuses requests
 *           at its node address with NO_HANDLERS 410 (ADR 0056; the linger
 *           outlasts the run: see docs/verification.md).
 *   CRASH   A crashes: S0 = {A, B} (A owns), S1 = {B}. A stops at the moment
 *           S1 is published; its call in flight still runs downstream.
 *   REJOIN  a second view change while the first hand-off is under way: S0 =
 *           {A} (A owns), S1 = {A, B} (B owns), then B leaves gracefully:
 *           S2 = members {A, B}, announced {A} (A owns again).
 *   REJOIN -DLIVES  the same, B's ferry deployed again (ADR 0131): a ferry
 *           under B's node id released view {A} and closed before the run,
 *           and A still has that release; the ferry B of the run is a new
 *           life (Router#life), whose releases carry it (`ferry-life`);
 *           -DLIFEHEARD: S2 is published only once A heard that life.
 *   REDEPLOY B's ferry deployed again between two of A's membership reads
 *           (ADR 0131's other case): S0 = S1 = {A, B} (B owns), A settled on
 *           S0 and released it to B's closed ferry; the ferry B of the run
 *           is a new life that knows no view yet and waits for A's release.
 *   TRIO    three nodes A, B, C (C = 2); snapshots S0..S2 as bit sets of
 *           members and announced nodes (-DS<i>M, -DS<i>A, -DNS), the
 *           ranking -DRANK0, -DRANK1. A member that is gone crashed, an
 *           announced member no longer announced leaves (once it started), a
 *           node not in S0 joins at the first snapshot naming it.
 *
 * Properties: never two calls in flight for the key outside a crash
 * (oneCallPerKey; -DSTRICT checks it in a crash too, and must fail); the
 * routing client's inputs reach the downstream in submission order
 * (keyOrder), and the fence refuses none but an input whose forward was
 * given up or that passed a crashed node (the routing rules keep order
 * themselves; any other refusal would be an order break turned into a 503:
 * fenceRefused); every input is
 * sent at most once (sentOnce); every request is answered exactly once
 * (exactlyOnce), and once nothing can move, every request was answered and
 * nothing is held or open at a live node (stranded, nothingOpen); a node's
 * engine starts no call once its hand-off began and hands off only with no
 * call in flight (noCallWhileHanding, handOffAfterCall); a node submits
 * nothing while a hand-off to it is on its way, a crashed node's aside
 * (handOffsFirst: the release travels behind the hand-offs); once nothing can
 * move, every leaving node refuses (leaveEnds: its leave ended, ADR 0099);
 * an input that came back to a node not delivered (410 or 408) is never
 * applied after a later input of its client (backOrder: per-sender order
 * across a hand-back, ADR 0115; keyOrder restricted to those inputs, checked
 * first); once nothing can move, every live node that knows a view is
 * settled: no release it waits for is missing (settles, Views#settled).
 * modelBound guards the model's own sizes.
 *
 * Ferry lives (ADR 0131, Router#released, Views#newLife): every release
 * carries its ferry's life; a node keeps the last life it heard from each node
 * id, and the first release of another life voids every release recorded from
 * that id and sends that node this node's release again (Router#releasedTo).
 * The membership announces each ferry's life too (ADR 0142), and only releases
 * of the announced ferry count (relOld: those of its predecessor).
 *
 * Hand-backs (ADRs 0109, 0112): a forwarded input's hold ends at its
 * sender's allowance (Pending#giveUpAt) and it goes back unapplied (408,
 * Router#returnToSender) with what is held of the same node's later arrivals
 * and the client's later inputs; the node marks the client's place
 * (Router#handBackMarks) and sends back the client's later inputs that reach
 * it while the mark lives (Router#afterHandedBack); a mark ends at any
 * moment. The sender holds what came back (410 or 408) in its place, paced,
 * and does not send it again while a later input of the client, forwarded
 * after it to the same node, is out (Router#waitBehindSent, #sentAfter,
 * #laterHere); if that one's answer says it may have been applied, the one
 * that came back is answered CLOSED, never applied (Router#overtaken), and so
 * is one still out then that comes back later (Router#overtakeOpen, ADR 0144). A
 * forwarded input's hold ends in a hand-back at most HB times a run (-DHB,
 * default 1); otherwise its deadline ends it (TIMEOUT), as it may in the code
 * when little of it was left. Answers say whether the input may have been
 * applied (ANS) or never was (NAPP), as Router#mayHaveApplied reads them;
 * an answer NAPP that reaches the client is true: its input was never sent
 * downstream (notAppliedTrue).
 * -DGIVEUP: a leaving node's leave may give up at any moment
 * (Router#abandonForwards: its open forwards answered 502 "given up, may
 * still be applied for N ms", what it holds behind them CLOSED, then it
 * refuses); a node that relays such a 502 may keep the forward
 * (Router#keepGivenUp) until a moment of its own, and holds the client's
 * later inputs behind it (#behindGivenUpForward); the routing client waits
 * before it sends the key's later requests (ClientRouter, KeyState
 * #givenUpUntil), until a moment of its own.
 * The fence (ADR 0146: a node never applies an input behind a later one of
 * its sender; Router#fence, #behindFence): each node keeps, for the key and
 * the client, the largest place it submitted to its ferry (fen); an input
 * that arrives (REQ, or FWD, hand-offs included) with a smaller place is
 * answered NAPP (503 CLOSED) to whoever sent it, at once and without a
 * Pending, and so is one about to be submitted; when the engine hands the key
 * off, the fence drops to just below the smallest place handed off (never
 * called, it may come back). It closes the slow-wire case of a leave that
 * gives up: the given-up forward that arrives after the client's later input
 * was submitted there is refused, not applied (docs/verification.md).
 * As in the code, the fence refuses only an input that passed another node
 * (Router#behind, ADR 0147); -DFENCE_VIEW: only one that passed a node outside
 * the refusing node's view (ADR 0146's rule); -DFENCE_ALL: every input (the rule first
 * modelled); -DFENCE_LEAVING: only an input that passed a node seen leaving
 * (a member whose ferry is open, not announced), the code's rule for a
 * while: not in formal/check, with -DCLOSE and 2 inputs it breaks keyOrder
 * (A's ferry closes, B adopts that, and x0 given up on the wire is no longer
 * fenced).
 * -DCLOSE (with -DLEAVE): the leaving node closes after its leave and drain
 * (Router#close: held CLOSED, open forwards 502); -DSTO=n: n send timeouts
 * between live nodes (Router#forwarded, TIMEOUT), within ADR 0109's premise
 * (-DSLOWWIRE drops its half about the wire). Departed senders (ADR 0110:
 * Router#departed, #departedOnItsWay, #dropFromDeparted) are modelled; the
 * -DTRIO crash after a join reaches them. -DTOOLATE=n: up to n forwards of
 * an input with a sender's allowance find too little of it left to send on
 * (Router#forward) and hold it until its hold ends; a hand-off held so holds
 * its sender's later hand-offs behind it (Router#heldBehindSameSender). Not
 * modelled: the close's drain timeout (docs/verification.md).
 * -DRELLOST (the join; ADR 0159 rule 2): A does not see B's peer
 * registration at first (ADR 0148's lag, `lag`), until a moment of its own;
 * meanwhile every forward and release A sends B is not delivered (NO_HANDLERS
 * at A's event bus: nothing goes on the link), and its failure reaches A's
 * loop at a later moment (nh). A forward not delivered comes back as a 410
 * does (Router#forwarded: held in its place, paced, B refused); a release not
 * delivered is marked lost if its view is still A's (Router#releaseNotDelivered,
 * relLost) and sent again at a later snapshot of the same membership
 * (Router#maybeRelease), but not while a hand-off that came back from B is
 * held at A to go again (Router#handingOffTo; one still open at B does not
 * count). Assumed: the failures of A's sends reach its loop before its next
 * timer, that snapshot, a pause or a hold's end (a NO_HANDLERS is a local
 * lookup's answer; pauses are 100 ms, snapshots a second apart:
 * docs/verification.md shows what breaks without it), not before messages
 * that arrive meanwhile. handOffsFirst
 * then counts a hand-off that B did not take as owed to B until it is sent
 * there again, and is checked where a release arrives too (under RELLOST):
 * a release arrives behind every hand-off it speaks for. Not modelled: a
 * release delivered whose reply timed out (sent again: a duplicate).
 *
 * Time is nondeterminism: a hold may expire at any moment (unless
 * -DNO_EXPIRY), a hand-back mark may end at any moment, a waiting request
 * of the client may pass its deadline at any moment, a paced retry may end its pause at any moment (at most RB times
 * before every party adopted the last snapshot), the window of
 * Views#ownedJustBefore closes at any moment, a call may pass its call
 * timeout at any moment.
 */

#ifndef N
#define N 3               /* inputs of the routing client, all of one key */
#endif
#ifndef MAXB
#define MAXB 2
#endif
#ifndef RB
#define RB 1              /* paced retries allowed before views converge */
#endif

#ifdef TRIO
#define NN 3              /* a third node, C (TRIO: see the scenarios) */
#else
#define NN 2
#endif
#define A 0
#define B 1
#define C 2
#define CL NN             /* the routing client, as a party */
#define NP (NN + 1)
#define NONE 7
#define SEVERAL 6
#define NOSLOT 255

/* snapshots */
#if defined(TRIO)
#ifndef NS
#define NS 3
#endif
#elif defined(REJOIN) || (defined(LEAVE) && defined(CLOSE))
#define NS 3
#else
#define NS 2
#endif
byte mem[NS];             /* live members (bitmask of nodes) */
byte ann[NS];             /* announced nodes */
byte fer[NS];             /* members whose ferry is open (announced or leaving): all but a closed one */
byte rank0, rank1;        /* the key's ranking of the nodes: owner = first in view */
#define VIEW(s) (ann[s] & mem[s])
#if NN == 3
#define rank2 (3 - rank0 - rank1)
#define owner(m) ((((m) >> rank0) & 1) -> rank0 : ((((m) >> rank1) & 1) -> rank1 : \
  ((((m) >> rank2) & 1) -> rank2 : NONE)))
#else
#define owner(m) ((((m) >> rank0) & 1) -> rank0 : ((((m) >> rank1) & 1) -> rank1 : NONE))
#endif
#define obit(o) ((o) == NONE -> 128 : (1 << (o)))
byte pub;                 /* last published snapshot */

/* message kinds */
#define REQ 1             /* client -> node: request x */
#define FWD 2             /* node -> node: a forward of pending a, flags b */
#define REP 3             /* the outcome for pending (or request) a: b */
#define REL 4             /* release of view a */
#define ANS 0             /* an outcome that says it may have been applied (OK, 502, ...) */
#define GONE 1            /* NO_HANDLERS 410: not delivered, the node leaves */
#define NAPP 2            /* an outcome that says never applied (503 CLOSED, 504 TIMEOUT) */
#define BACK 3            /* NO_HANDLERS 408 (Router.RETURNED): handed back, never applied */
#define GIVEN 4           /* 502 "given up by a leave (may still be applied for N ms)" (Router.GIVEN_UP) */

#if defined(TARGET)
#define PROP(name, c) assert((c) || name != TARGET)
#define PID(v) = v
#elif defined(EXCEPT)
/* every property but one or two (a known defect's, see docs/verification.md) */
#ifndef EXCEPT2
#define EXCEPT2 0
#endif
#define PROP(name, c) assert((c) || name == EXCEPT || name == EXCEPT2)
#define PID(v) = v
#else
#define PROP(name, c) assert((c) || name)
#define PID(v)
#endif
hidden byte oneCallPerKey PID(1), keyOrder PID(2), exactlyOnce PID(3),
  stranded PID(4), noCallWhileHanding PID(5), handOffAfterCall PID(6),
  nothingOpen PID(7), modelBound PID(8), sentOnce PID(9), handOffsFirst PID(10),
  leaveEnds PID(11), backOrder PID(12), settles PID(13), notAppliedTrue PID(14);

/* ---- pendings: an input accepted at a node (Pending), slot (n, x, d) ---- */
#ifndef D
#define D 2
#endif
#define NPEND (NN * N * D)
#define pslot(n, x, d) (((n) * N + (x)) * D + (d))
#define pnode(p) ((p) / (N * D))
#define pinput(p) (((p) / D) % N)
#define FREE 0
#define HELD 1            /* in the key's held queue */
#define FWDD 2            /* forwarded, the forward open */
#define ENG 3             /* submitted to this node's ferry */
#define FLUSHING 4        /* taken out of the held queue by a flush */
#define KEPT 5            /* answered GIVEN, its forward kept in Router#openByOrigin (#keepGivenUp) */
byte pst[NPEND];
byte pup[NPEND];          /* who gets the answer: a node, or CL */
byte pupid[NPEND];        /* ... and its pending there (CL: the input) */
bool psnd[NPEND];         /* Pending#sender != null: a node forwarded it here */
byte pvis[NPEND];         /* Pending#visited, as a bitmask of nodes */
byte phop[NPEND];
bool pho[NPEND];          /* Pending#handedOff */
bool pret[NPEND];         /* Pending#returned */
bool palong[NPEND];       /* Pending#alongPath */
bool pwp[NPEND];          /* Pending#waitsForPath */
bool pretry[NPEND];       /* Pending#retry */
bool ppace[NPEND];        /* held with a pause (RETRY_MS) */
byte paseq[NPEND];        /* Pending#seq: arrival number at its node */
byte pft[NPEND];          /* the target of its open forward (kept while pbs: Pending#forwardTarget) */
bool pback[NPEND];        /* ... a back trip (Forward#back) */
bool phb[NPEND];          /* Pending#handedBack: its last forward came back 408 */
bool pbs[NPEND];          /* Pending#behindSent: came back, waits for what went out after it */
bool pot[NPEND];          /* Forward#overtakenBy: out while a later input sent after it may have been applied */
#ifdef TOOLATE
bool plate[NPEND];        /* found too late to send on (Router#forward): held until its hold ends */
#endif
short aft[NPEND];         /* the pendings of its node forwarded after its last forward
                           * (Forward#no > Pending#forwardNo), bits by pslot(0, x, d); kept
                           * only while it is forwarded or pbs */

/* held order (Pending#before): hand-offs first, then arrival at the node */
#define okey(p) ((pho[p] -> 0 : 64) + paseq[p])
#define OLD(p) (pho[p] || pret[p] || palong[p])

#define RELTO(n) (mb[n] & ~(1 << (n)))
/* ---- node state (Router, Views) ---- */
byte vi[NN];              /* last snapshot adopted */
bool kn[NN];              /* Views#known */
byte vw[NN];              /* the view (bitmask) */
byte mb[NN];              /* Views#members */
byte unsN[NN];            /* nodes of the unsettled views */
byte unsO[NN];            /* owners of the key in the unsettled views (obit) */
byte aw[NN];              /* Views#awaiting */
byte rel[NN * 8];         /* releases received, per view id (mask) */
/* releases received from B's closed ferry (life 1), recorded before the run;
 * rel holds those of the ferries in the run. A release counts only if its
 * life is the one the node's last snapshot names at its sender (ADR 0142,
 * Views#counts: COUNTED below); a first release of another life voids these
 * as it voids rel (ADR 0131) */
byte relOld[NN * 8];
bool jb[NN];              /* Views#ownedJustBefore, window open */
bool relSent[NN];
byte relTo[NN];           /* the nodes the current view's release went to (Router#releasedTo) */
bool hoff[NN];            /* handingOff has the key */
byte hoOpen[NN];          /* handOffsOpen */
byte unr[NN];             /* unreachable */
byte pc[NN * 3];          /* paths: open forwards of the key per target */
byte bt[NN * 3];          /* Router#backTrips: those that went back to a node the input came through */
byte arr[NN];             /* arrivals: the largest paseq in use at the node */
bool leaving[NN];         /* leave started (announcement withdrawn) */
bool refusing[NN];        /* ClusterNode#refusing */
bool gone[NN];            /* Router#goneFromViews: settled on a view without itself */
bool abandoned[NN];       /* Router#abandoned: the leave gave up its forwards (-DGIVEUP) */
byte gvp[NN];             /* Router#givenUp: the first place given up here, plus 1 (0: none) */
byte mk[NN];              /* Router#handBackMarks: the client's places handed back (bits) */
byte mks[NN * N];         /* ... and the node each went back to (HandBackMark#sender) */
bool dead[NN];
byte fen[NN];             /* Router#fence: the largest place submitted here, plus 1 (0: none) */
/* Router#behindFence: place x comes after a later place of its client was
 * submitted here (equal passes: the same input again) */
#if defined(FENCE_LEAVING)
#define LEAVINGAT(n) (fer[vi[n]] & mb[n] & ~vw[n])
#define behindFence(n, x, vis) ((x) + 1 < fen[n] && ((vis) & LEAVINGAT(n)) != 0)
#elif defined(FENCE_ALL)
#define behindFence(n, x, vis) ((x) + 1 < fen[n])
#elif defined(FENCE_VIEW)
/* ADR 0146's first rule: only an input that passed a node outside this
 * node's view (a forward from a crashed node not yet seen gone passes) */
#define behindFence(n, x, vis) ((x) + 1 < fen[n] && ((vis) & ~vw[n]) != 0)
#else
/* the code's rule (ADR 0147): an input that passed another node
 * (Router#behind); one the client sent here straight is never behind */
#define behindFence(n, x, vis) ((x) + 1 < fen[n] && (vis) != 0)
#endif
bool closed[NN];          /* Router#closed (-DCLOSE): ClusterNode#close after the leave */
/* the node's loop still runs its timers and membership: not crashed, not
 * closed (after Router#close its Vert.x may close too: no timer, no snapshot) */
#define UP(n) (!dead[n] && !closed[n])
/* ferry lives (ADR 0131): the life of each node's ferry in the run, sent with
 * its releases (ClusterNode.LIFE); 1 unless B's ferry is one deployed again
 * (2, its predecessor's 1); and per node, the last life it heard from each
 * node (Views#lives; 0: none) */
#if defined(LIVES) || defined(REDEPLOY)
#define LIFE(n) ((n) == B -> 2 : 1)
#else
#define LIFE(n) 1
#endif
byte heard[NN * NN];
/* per node, the life of B's ferry its last snapshot named (Views#announcedLives,
 * ADR 0142; 0: no open ferry at B). Each snapshot that lists B's ferry names
 * the life of the ferry in the run: a ferry writes its life before it
 * announces itself, so a read that names an older life also predates the new
 * ferry's announcement, i.e. it is an earlier read, which the model's free
 * timing of reads covers */
#if defined(LIVES) || defined(REDEPLOY)
byte alife[NN];
#define SLIFE(s) LIFE(B)
/* Views#counts: of the releases recorded for n's view, those that count: a
 * release of B's counts if its life is the one n's snapshot names (or none) */
#define BBIT(n, c) (((n) != B && (c)) -> (1 << B) : 0)
#define COUNTED(n) ((rel[(n) * 8 + vw[n]] & ~BBIT(n, alife[n] != 0 && alife[n] != LIFE(B))) | \
  (relOld[(n) * 8 + vw[n]] & BBIT(n, alife[n] == 0 || alife[n] == 1)))
#else
#define COUNTED(n) rel[(n) * 8 + vw[n]]
#endif

#define known(n) kn[n]
#define gated(n) (aw[n] != 0 && (unsO[n] & ~(1 << (n))) != 0)

/* ---- each node's engine for the key ---- */
chan lane[NN] = [N * D] of { byte };
bool inflight[NN];
bool handing[NN];         /* Lane#handOffs != null */
int callMem[NN];          /* the pendings of the call in flight */
bool over[NN];            /* the call timeout fired */

/* ---- the routing client (ClientRouter, one key) ---- */
byte cvi;
bool ckn;
byte cvw;                 /* its view */
byte cleav;               /* nodes that said they are leaving (GONE) */
byte cunr;                /* unreachable */
byte cinf;                /* KeyState#inFlight */
byte ctgt;                /* KeyState#target */
chan cwait = [N] of { byte };  /* KeyState#waiting, sorted by seq */
bool cretry;              /* the retry timer is armed */
bool cgu;                 /* KeyState#givenUpUntil not passed: the key waits (a 502 given up) */
byte csnd[N];             /* the node request x is sent to, NONE if none */
byte cst[N];              /* 0 not submitted, 1 submitted, 2 answered */
#define cowner (ckn -> owner(cvw & ~cleav) : NONE)

/* ---- the network: net[src * NP + dst] ---- */
chan net[NP * NP] = [2 * N + 2] of { byte, byte, byte };

/* ---- ghosts ---- */
byte wire;                /* calls of the key on the downstream */
byte hoT[NN * NN];        /* inputs node f's engine handed off, on their way to node t: hoT[f * NN + t] */
byte dep[NN];             /* Router#departed: members a node adopted, gone from the members it adopted since */
#ifdef RELLOST
/* ADR 0159 rule 2 (-DRELLOST, the join): A does not see B's peer registration
 * yet (ADR 0148's lag, `lag`), until a moment of its own; until then every
 * forward and release A sends B is not delivered (NO_HANDLERS, at A's event
 * bus: nothing goes on the link), and its failure reaches A's loop later
 * (nh[A]: REP GONE for a forward, RELF for a release) */
#define RELF 5            /* nh only: a release of view a not delivered (Router#releaseNotDelivered) */
#define LAGT B
#define LAGGED(sf, st) (lag && (sf) == A && (st) == LAGT)
bool lag = 1;
chan nh[NN] = [N * D + 2] of { byte, byte, byte };
#define NHIN(n) || nempty(nh[n])
/* the failures of a node's sends (a local lookup's answer, ms) reach its
 * loop before its next timer: a pause (100 ms), a hold's end, a snapshot */
#define NHQUIET(n) (len(nh[n]) == 0)
byte relLost[NN];         /* Router#releaseLost: the targets whose release of the current view was not delivered */
/* ghost: a hand-off of this node's engine whose forward its target did not
 * take (NO_HANDLERS), still to go there (pft): owed to it (handOffsFirst) */
bool gow[NPEND];
hidden byte zgw;
#else
#define NHIN(n)
#define NHQUIET(n) 1
#endif
/* no hand-off is on its way to n but from a crashed node: a crashed node's
 * hand-off may arrive at any later moment, even after n submitted the
 * client's next input (the event bus delivers what a removed member wrote,
 * docs/verification.md); then it is dropped (its sender departed, ADR 0110)
 * or fenced (ADR 0147), and keyOrder says whether that kept the order */
#ifdef RELLOST
/* ... nor one its target did not take and that is owed to it (gow: refused,
 * held at its sender to go again) */
#define OAT(f, n, i) ((i) < N * D && gow[(f) * N * D + (i)] && pft[(f) * N * D + (i)] == (n))
#define OWED(f, n) (OAT(f, n, 0) || OAT(f, n, 1) || OAT(f, n, 2) || OAT(f, n, 3) || OAT(f, n, 4) || \
  OAT(f, n, 5) || OAT(f, n, 6) || OAT(f, n, 7) || OAT(f, n, 8) || OAT(f, n, 9) || OAT(f, n, 10) || OAT(f, n, 11))
#define HOFROM(f, n) ((hoT[(f) * NN + (n)] == 0 && !OWED(f, n)) || dead[f])
#else
#define HOFROM(f, n) (hoT[(f) * NN + (n)] == 0 || dead[f])
#endif
#if NN == 3
#define DEADSET (dead[0] | (dead[1] << 1) | (dead[2] << 2))
#define HOFIRST(n) (HOFROM(0, n) && HOFROM(1, n) && HOFROM(2, n))
#else
#define DEADSET (dead[0] | (dead[1] << 1))
#define HOFIRST(n) (HOFROM(0, n) && HOFROM(1, n))
#endif
byte nextSeq;             /* the client's next input in order */
bool sent[N];
byte budget = RB;
#ifndef HB
#define HB 1              /* hand-backs (holds of forwarded inputs that end) in a run */
#endif
byte hbud = HB;
bool crashed;
bool cameBack[N];         /* the input came back to a node not delivered (410 or 408) */
bool givenUp[N];          /* a forward of the input was given up (502 GIVEN: a leave, a close) */

/* scratch (hidden: every event is one atomic step) */
hidden byte zrOwn, zrVia, zrTgt, zrq, zrb, zri, zqi, zfj, zfb, zhx, zdx, zdc, zci, zsi,
  zss, zsnv, zsch, zmt, zei, ztt, zwx, zwk, zff, zeng, zbo, zbk, zbb, zbq, zcls, zbl, zro,
  zah, zsa, zx, zq, zfa, zaf, zfh, zfk, zown, zlive, zagain, zfst, zgv;
hidden short zov;
hidden int zdm;

#if NN == 3
#define conv ((!UP(A) || vi[A] == pub) && (!UP(B) || vi[B] == pub) && (!UP(C) || vi[C] == pub) && cvi == pub)
#else
#define conv ((!UP(A) || vi[A] == pub) && (!UP(B) || vi[B] == pub) && cvi == pub)
#endif

/* guards that say exactly when an event can do something (N * D <= 12) */
#define HAT(n, i) ((i) < N * D && pst[(n) * N * D + (i)] == HELD)
#define ANYHELD(n) (HAT(n, 0) || HAT(n, 1) || HAT(n, 2) || HAT(n, 3) || HAT(n, 4) || HAT(n, 5) || \
  HAT(n, 6) || HAT(n, 7) || HAT(n, 8) || HAT(n, 9) || HAT(n, 10) || HAT(n, 11))
#define PAT(n, i) (HAT(n, i) && ppace[(n) * N * D + (i)])
#define ANYPACED(n) (PAT(n, 0) || PAT(n, 1) || PAT(n, 2) || PAT(n, 3) || PAT(n, 4) || PAT(n, 5) || \
  PAT(n, 6) || PAT(n, 7) || PAT(n, 8) || PAT(n, 9) || PAT(n, 10) || PAT(n, 11))
#define CDEAD(x) ((x) < N && csnd[x] != NONE && dead[csnd[x]])
#define ANYCDEAD (CDEAD(0) || CDEAD(1) || CDEAD(2) || CDEAD(3))

/* a message from a node to party t is waiting */
#if NN == 3
#define NETIN(t) (nempty(net[0 * NP + (t)]) || nempty(net[1 * NP + (t)]) || nempty(net[2 * NP + (t)]))
#else
#define NETIN(t) (nempty(net[0 * NP + (t)]) || nempty(net[1 * NP + (t)]))
#endif

/* a message to a crashed node is lost (nobody reads it) */
inline netSend(sf, st, sk, sa, sb) {
  if
  :: (st) < NN && dead[st] -> skip
#ifdef RELLOST
  /* not delivered (NO_HANDLERS): the failure, not the message, reaches the
   * sender's loop (a forward's with its hand-off ghost bit) */
  :: LAGGED(sf, st) && (sk) == FWD ->
     PROP(modelBound, len(nh[sf]) < N * D + 2);
     nh[sf]!REP, sa, GONE | ((sb) & 128)
  :: LAGGED(sf, st) && (sk) == REL ->
     PROP(modelBound, len(nh[sf]) < N * D + 2);
     nh[sf]!RELF, sa, 0
#endif
  :: else ->
     PROP(modelBound, len(net[(sf) * NP + (st)]) < 2 * N + 2);
     net[(sf) * NP + (st)]!sk, sa, sb
  fi
}

/* ---------------------------------------------------------- the router */

/* the bit of pending p in aft[] of the pendings of its node */
#define ABIT(p) (1 << ((p) % (N * D)))

inline freeP(p) {
  /* arrival numbers are only compared: those after p's close the gap, so
   * that they stay below N * D (the same order, fewer states) */
  if
  :: paseq[p] > 0 ->
     zfa = pslot(pnode(p), 0, 0);
     do
     :: zfa < pslot(pnode(p) + 1, 0, 0) ->
        if
        :: paseq[zfa] > paseq[p] -> paseq[zfa]--
        :: else -> skip
        fi;
        zfa++
     :: else -> break
     od;
     arr[pnode(p)]--
  :: else -> skip
  fi;
  pst[p] = FREE; pup[p] = 0; pupid[p] = 0; psnd[p] = 0; pvis[p] = 0;
  phop[p] = 0; pho[p] = 0; pret[p] = 0; palong[p] = 0; pwp[p] = 0;
  pretry[p] = 0; ppace[p] = 0; paseq[p] = 0; pft[p] = 0; pback[p] = 0;
  phb[p] = 0; pbs[p] = 0; aft[p] = 0; pot[p] = 0;
#ifdef TOOLATE
  plate[p] = 0;
#endif
#ifdef RELLOST
  gow[p] = 0;
#endif
  /* no longer sent after anything (Router#forwardClosed) */
  zfa = pslot(pnode(p), 0, 0);
  do
  :: zfa < pslot(pnode(p) + 1, 0, 0) -> aft[zfa] = aft[zfa] & ~ABIT(p); zfa++
  :: else -> break
  od;
  zfa = 0
}

/* the one outcome of pending p, to whoever it came from: ANS (may have been
 * applied), NAPP (never applied), BACK (handed back, 408) */
inline netSendTo(n, p, code) {
  if
  :: (code) == GIVEN -> givenUp[pinput(p)] = 1
  :: else -> skip
  fi;
  if
  :: pup[p] == CL -> netSend(n, CL, REP, pinput(p), code)
  :: pup[p] != CL && pupid[p] == NOSLOT -> skip   /* its sender's send timed out: the event bus drops the reply */
  :: else -> netSend(n, pup[p], REP, pupid[p], code)
  fi
}

inline answerC(p, code) {
  PROP(exactlyOnce, pst[p] != FREE);
  netSendTo(pnode(p), p, code);
  freeP(p)
}
#define answerP(p) answerC(p, ANS)

/* Router#hold: into the key's held queue (ordered by okey); one that came
 * back and waits behind what was sent after it keeps its last forward's
 * target (Pending#forwardTarget) and what went out after it */
inline hold(p, paced) {
  pst[p] = HELD; ppace[p] = paced; pback[p] = 0;
  if
  :: !pbs[p] -> pft[p] = 0; aft[p] = 0
  :: else -> skip
  fi
}

/* Router#forward (Forward#no: p goes out after the last forward of every
 * pending of n that is out or came back, aft; unwait). -DTOOLATE: an input
 * with a sender's allowance (psnd: Pending#giveUpAt) may have too little of
 * it left to send on (holdMs <= 0): held, not sent, until its hold ends (a
 * hand-back, or its deadline); time only runs on, so it stays too late here
 * (TOOLATE times a run). A hand-off forward is counted on its way (hoT). */
inline forward(n, t, p, cls) {
#ifdef TOOLATE
  if
  :: psnd[p] && !plate[p] && tlb > 0 -> plate[p] = 1; tlb--
  :: true -> skip
  fi;
  if
  :: plate[p] -> phb[p] = 0; hold(p, 0)
  :: else ->
#endif
  zaf = pslot(n, 0, 0);
  do
  :: zaf < pslot(n + 1, 0, 0) ->
     if
     :: zaf != p && (pst[zaf] == FWDD || pst[zaf] == KEPT || pbs[zaf]) -> aft[zaf] = aft[zaf] | ABIT(p)
     :: else -> skip
     fi;
     zaf++
  :: else -> break
  od;
  zaf = 0;
  aft[p] = 0; pbs[p] = 0; phb[p] = 0;
  pc[(n) * 3 + (t)]++;
  pst[p] = FWDD; pft[p] = t;
  pback[p] = (pvis[p] >> (t)) & 1;
  bt[(n) * 3 + (t)] = bt[(n) * 3 + (t)] + pback[p];
  zff = (phop[p] < 2 -> phop[p] + 1 : 2);
#ifdef RELLOST
  /* an owed hand-off sent again is on its way again (the ghost bit) */
  zgw = zeng || gow[p]; gow[p] = 0;
#define ZENG zgw
#else
#define ZENG zeng
#endif
  zff = zff | ((cls) << 2) | ((pvis[p] | (1 << (n))) << 3) | (ZENG << 7);
  netSend(n, t, FWD, p, zff);
  hoT[(n) * NN + (t)] = hoT[(n) * NN + (t)] + ZENG;
  zff = 0
#ifdef TOOLATE
  fi
#endif
}

#ifdef STO
#define SENDTIMEOUTS STO
#else
#define SENDTIMEOUTS 0
#endif
byte sto = SENDTIMEOUTS;  /* send timeouts between live nodes left in the run */
#ifdef TOOLATE
byte tlb = TOOLATE;       /* forwards found too late to send on, left in the run */
#endif
/* a send timeout (seconds: the wait plus three call timeouts) outlasts the
 * wire: what its target sent before has arrived; -DSLOWWIRE drops that */
#ifdef SLOWWIRE
#define WIREQUIET(t, n) 1
#else
#define WIREQUIET(t, n) (len(net[(t) * NP + (n)]) == 0)
#endif
hidden byte ztd, ztq, ztc;

/* ztd = the pending forward p made at its target, when p's input is in an
 * owner's ferry down p's chain (submitted, not held anywhere: ADR 0109's
 * premise for a send timeout); NOSLOT otherwise (on the wire, held, answered) */
inline timeoutDue(p) {
  ztd = NOSLOT; ztq = p;
  do
  :: true ->
     ztc = NOSLOT; zq = pslot(pft[ztq], 0, 0);
     do
     :: zq < pslot(pft[ztq] + 1, 0, 0) ->
        if
        :: pst[zq] != FREE && psnd[zq] && pup[zq] == pnode(ztq) && pupid[zq] == ztq -> ztc = zq
        :: else -> skip
        fi;
        zq++
     :: else -> break
     od;
     zq = 0;
     if
     :: ztc == NOSLOT -> break
     :: ztc != NOSLOT && ztq == p -> ztd = ztc
     :: else -> skip
     fi;
     if
     :: pst[ztc] == ENG -> break
     :: pst[ztc] == FWDD -> ztq = ztc
     :: else -> ztd = NOSLOT; break
     fi
  od;
  if
  :: ztc == NOSLOT -> ztd = NOSLOT
  :: else -> skip
  fi;
  ztq = 0; ztc = 0
}

/* Router#pathOf: the one target of the path not in vis; NONE or SEVERAL */
inline pathOf(n, vis) {
  zrVia = NONE; zqi = 0;
  do
  :: zqi < NN ->
     if
     :: pc[(n) * 3 + zqi] > 0 && !(((vis) >> zqi) & 1) ->
        zrVia = (zrVia == NONE -> zqi : SEVERAL)
     :: else -> skip
     fi;
     zqi++
  :: else -> break
  od
}

/* Router#passedPath leaves out the targets with a back trip open */
#define PNB(n, t) ((((pc[(n) * 3 + (t)] > 0) && bt[(n) * 3 + (t)] == 0)) << (t))
/* Router#backTripTo: a back trip of the key open to a node vis names */
#define BTO(n, t) ((bt[(n) * 3 + (t)] > 0) << (t))
#if NN == 3
#define pathNoBack(n) (PNB(n, 0) | PNB(n, 1) | PNB(n, 2))
#define backTripTo(n, vis) ((BTO(n, 0) | BTO(n, 1) | BTO(n, 2)) & (vis))
#else
#define pathNoBack(n) (PNB(n, 0) | PNB(n, 1))
#define backTripTo(n, vis) ((BTO(n, 0) | BTO(n, 1)) & (vis))
#endif

/* Router#behindBackTrip: zbb = 1 when an earlier input of the same sender
 * (Pending#origin: the client's inputs in order) was sent back from n to a
 * node p came through and is still unanswered there */
inline behindBackTrip(n, p) {
  zbb = 0; zbq = pslot(n, 0, 0);
  do
  :: zbq < pslot(n + 1, 0, 0) ->
     if
     :: pst[zbq] == FWDD && pback[zbq] && ((pvis[p] >> pft[zbq]) & 1) && pinput(zbq) < pinput(p) -> zbb = 1
     :: else -> skip
     fi;
     zbq++
  :: else -> break
  od;
  zbq = 0
}

/* Router#behindHeld: zrb = 1 when a held input of the key goes before p;
 * Router#behindOwnSender: zro = 1 when one of them is an earlier input of
 * p's sender (the client's inputs in order), which a paced retry still waits
 * behind (ADR 0106) */
inline behindHeld(n, p) {
  zrb = 0; zro = 0; zri = pslot(n, 0, 0);
  do
  :: zri < pslot(n + 1, 0, 0) ->
     if
     :: pst[zri] == HELD && okey(zri) < okey(p) && (!OLD(p) || (OLD(zri) && !pwp[zri])) -> zrb = 1
     :: else -> skip
     fi;
     if
     :: pst[zri] == HELD && okey(zri) < okey(p) && pinput(zri) < pinput(p) -> zro = 1
     :: else -> skip
     fi;
     zri++
  :: else -> break
  od
}

/* ---- what came back waits for what went on after it (ADRs 0109, 0112, 0115) ---- */

/* Router#laterHere: q's forward went out from q's node after p's last forward
 * (Forward#no > Pending#forwardNo), to the same node, carries a later place of
 * the client, and is behind p in this node's order (Pending#before), unless q
 * is old (a hand-off, come back or along the path) and p is not */
#define LATERHERE(p, q) ((pst[q] == FWDD || pst[q] == KEPT) && pinput(q) > pinput(p) && ((aft[p] & ABIT(q)) != 0) && \
  pft[q] == pft[p] && okey(p) < okey(q) && (OLD(p) || !OLD(q)))

/* a forward of an earlier place of the client kept after its give-up (N * D <= 12) */
#define KAT(n, i, p) ((i) < N * D && pst[(n) * N * D + (i)] == KEPT && pinput((n) * N * D + (i)) < pinput(p))
#define KEPTBEFORE(n, p) (KAT(n, 0, p) || KAT(n, 1, p) || KAT(n, 2, p) || KAT(n, 3, p) || KAT(n, 4, p) || \
  KAT(n, 5, p) || KAT(n, 6, p) || KAT(n, 7, p) || KAT(n, 8, p) || KAT(n, 9, p) || KAT(n, 10, p) || KAT(n, 11, p))
#define KET(n, i) ((i) < N * D && pst[(n) * N * D + (i)] == KEPT)
#define FAT(n, i) ((i) < N * D && pst[(n) * N * D + (i)] == FWDD)
#define ANYFWD(n) (FAT(n, 0) || FAT(n, 1) || FAT(n, 2) || FAT(n, 3) || FAT(n, 4) || FAT(n, 5) || \
  FAT(n, 6) || FAT(n, 7) || FAT(n, 8) || FAT(n, 9) || FAT(n, 10) || FAT(n, 11))
#define ANYKEPT(n) (KET(n, 0) || KET(n, 1) || KET(n, 2) || KET(n, 3) || KET(n, 4) || KET(n, 5) || \
  KET(n, 6) || KET(n, 7) || KET(n, 8) || KET(n, 9) || KET(n, 10) || KET(n, 11))

/* Router#sentAfter: zsa = 1 when a later input of p's client, forwarded from
 * n after p's last forward, is unanswered (laterHere) */
inline sentAfter(n, p) {
  zsa = 0; zq = pslot(n, 0, 0);
  do
  :: zq < pslot(n + 1, 0, 0) ->
     if
     :: LATERHERE(p, zq) -> zsa = 1
     :: else -> skip
     fi;
     zq++
  :: else -> break
  od;
  zq = 0
}

/* Router#overtaken, what it looks at: zov = the inputs of n that came back and
 * wait behind q's forward (behindSent) which laterHere says q went out after:
 * once q may have been applied, they never are (answered CLOSED) */
inline overtaken(n, q) {
  zov = 0; zq = pslot(n, 0, 0);
  do
  :: zq < pslot(n + 1, 0, 0) ->
     if
     :: pbs[zq] && LATERHERE(zq, q) -> zov = zov | ABIT(zq)
     :: else -> skip
     fi;
     zq++
  :: else -> break
  od;
  zq = 0
}

/* Router#overtakeOpen (ADR 0144): q may have been applied; the forwards of n
 * still out that q went out after (laterHere) are marked: if one comes back
 * not delivered, it is answered CLOSED, never sent again */
inline overtakeOpen(n, q) {
  zq = pslot(n, 0, 0);
  do
  :: zq < pslot(n + 1, 0, 0) ->
     if
     :: pst[zq] == FWDD && LATERHERE(zq, q) -> pot[zq] = 1
     :: else -> skip
     fi;
     zq++
  :: else -> break
  od;
  zq = 0
}

/* ... and their answers, after q's: CLOSED, never applied */
inline answerOvertaken(n) {
  zq = pslot(n, 0, 0);
  do
  :: zq < pslot(n + 1, 0, 0) ->
     if
     :: (zov & ABIT(zq)) != 0 -> answerC(zq, NAPP)
     :: else -> skip
     fi;
     zq++
  :: else -> break
  od;
  zq = 0
}

/* Router#sentAfterAnswered: a forward of input zsn of the client from n is
 * answered: the client's earliest input that waits here behind what was sent
 * after it goes once nothing is (the key's held inputs routed again) */
inline sentAfterAnswered(n, sq) {
  if
  :: !hoff[n] ->
     zfst = NOSLOT; zq = pslot(n, 0, 0);
     do
     :: zq < pslot(n + 1, 0, 0) ->
        if
        :: pbs[zq] && (zfst == NOSLOT || pinput(zq) < pinput(zfst)) -> zfst = zq
        :: else -> skip
        fi;
        zq++
     :: else -> break
     od;
     zq = 0;
     if
     :: zfst != NOSLOT && pinput(zfst) < (sq) ->
        sentAfter(n, zfst);
        if
        :: !zsa -> flush(n)
        :: else -> skip
        fi
     :: else -> skip
     fi;
     zfst = 0; zsa = 0
  :: else -> skip
  fi
}

/* Router#returnToSender: p goes back to the node that sent it, never applied
 * (NO_HANDLERS 408); its client's place is marked until that node stops
 * waiting for it, the marks of its later places forgotten (ADR 0112) */
inline returnToSender(n, p) {
  mk[n] = mk[n] & ((2 << pinput(p)) - 1);
  mk[n] = mk[n] | (1 << pinput(p));
  zx = 0;
  do
  :: zx < N ->
     if
     :: !((mk[n] >> zx) & 1) -> mks[(n) * N + zx] = 0
     :: else -> skip
     fi;
     zx++
  :: else -> break
  od;
  mks[(n) * N + pinput(p)] = pup[p];
  zx = 0;
  answerC(p, BACK)
}

/* Router#departed: seen as a member, then gone from the members (crashed) */
#define DEPARTED(n, x) (known(n) && !((mb[n] >> (x)) & 1) && dead[x])

/* Router#afterHandedBack: zah = 1 when p (forwarded here) is a later input of
 * a client one of whose inputs n handed back and has not seen again, while
 * its sender may still send it (a live mark: its time not over, its node a
 * member); p's own mark ends if it comes again through the node it went to */
inline afterHandedBack(n, p) {
  zah = 0;
  if
  :: psnd[p] && mk[n] != 0 ->
     zx = pinput(p);
     zown = (mk[n] >> zx) & 1;
     zlive = zown && !DEPARTED(n, mks[(n) * N + zx]);
     zagain = zlive && ((pvis[p] >> mks[(n) * N + zx]) & 1);
     if
     :: zown && !(zlive && !zagain) -> mk[n] = mk[n] & ~(1 << zx); mks[(n) * N + zx] = 0
     :: else -> skip
     fi;
     /* the earliest live mark; ended ones before it go */
     zq = 0;
     do
     :: zq < N && ((mk[n] >> zq) & 1) && DEPARTED(n, mks[(n) * N + zq]) ->
        mk[n] = mk[n] & ~(1 << zq); mks[(n) * N + zq] = 0; zq++
     :: zq < N && ((mk[n] >> zq) & 1) && !DEPARTED(n, mks[(n) * N + zq]) -> break
     :: zq < N && !((mk[n] >> zq) & 1) -> zq++
     :: else -> break
     od;
     zah = !zagain && zq < zx;
     zq = 0; zx = 0; zown = 0; zlive = 0; zagain = 0
  :: else -> skip
  fi
}

/* PerKeyEngine#admit and #dispatch for the key */
inline dispatch(n) {
  if
  :: !inflight[n] && len(lane[n]) > 0 ->
     zdm = 0; zdc = 0;
     do
     :: zdc < MAXB && len(lane[n]) > 0 ->
        lane[n]?zdx;
        PROP(backOrder, !cameBack[pinput(zdx)] || pinput(zdx) >= nextSeq);
        PROP(keyOrder, pinput(zdx) >= nextSeq);
        nextSeq = pinput(zdx) + 1;
        PROP(sentOnce, !sent[pinput(zdx)]);
        sent[pinput(zdx)] = 1;
        zdm = zdm | (1 << zdx); zdc++
     :: else -> break
     od;
     PROP(noCallWhileHanding, !handing[n]);
     inflight[n] = 1; callMem[n] = zdm; over[n] = 0;
     wire++;
#ifdef STRICT
     PROP(oneCallPerKey, wire <= 1)
#else
     PROP(oneCallPerKey, wire <= 1 || crashed)
#endif
  :: else -> skip
  fi
}

/* the fence refuses place x (503 CLOSED): without it x would go on behind a
 * later place of its client submitted at this node. The routing rules keep
 * order without the fence, but for an input whose forward a leave gave up
 * (ADR 0146) and one that passed a crashed node (its caller had its 502 or
 * timeout; what the crashed node sent may arrive at any moment, ADR 0147):
 * any other refusal counts as an order break, a 503 the client did not need
 * (backOrder first for one that came back, as in dispatch) */
#define PASSEDDEAD(vis) (((vis) & DEADSET) != 0)
inline fenceRefused(x, vis) {
  PROP(backOrder, !cameBack[x] || givenUp[x] || PASSEDDEAD(vis));
  PROP(keyOrder, givenUp[x] || PASSEDDEAD(vis))
}

/* Router#submit; behind the fence (arrival normally catches it): CLOSED */
inline submit(n, p) {
  if
  :: behindFence(n, pinput(p), pvis[p]) -> fenceRefused(pinput(p), pvis[p]); answerC(p, NAPP)
  :: else ->
     PROP(handOffsFirst, HOFIRST(n));
     pbs[p] = 0; aft[p] = 0; pft[p] = 0;       /* unwait */
#ifdef RELLOST
     gow[p] = 0;
#endif
     if
     :: pinput(p) + 1 > fen[n] -> fen[n] = pinput(p) + 1
     :: else -> skip
     fi;
     pst[p] = ENG;
     lane[n]!p;
     dispatch(n)
  fi
}

/* Router#route */
inline route(n, p) {
  if
  :: paseq[p] == 0 -> arr[n]++; PROP(modelBound, arr[n] < 64); paseq[p] = arr[n]
  :: else -> skip
  fi;
  if
  :: psnd[p] && !pret[p] && ((pvis[p] >> (n)) & 1) -> pret[p] = 1
  :: else -> skip
  fi;
  if
  :: psnd[p] && !pret[p] && !palong[p] && (pvis[p] & pathNoBack(n)) != 0 -> palong[p] = 1
  :: else -> skip
  fi;
  if
  /* Router#departedOnItsWay: it passed a node that left the members this
   * node adopted: never applied (ADR 0110) */
  :: (pvis[p] & dep[n]) != 0 -> answerC(p, NAPP)
  :: else ->
  afterHandedBack(n, p);
  if
  :: pbs[p] -> sentAfter(n, p)
  :: else -> zsa = 0
  fi;
  if
  :: zah -> returnToSender(n, p)      /* sent on before its node saw the earlier one go back */
  /* came back, and the client's later inputs sent from here after it are out (ADR 0115) */
  :: !zah && pbs[p] && zsa -> hold(p, 0)
  /* Router#behindGivenUpForward: an earlier input of its client forwarded from
   * here was given up by a leave further on and may still be applied */
  :: !zah && !(pbs[p] && zsa) && KEPTBEFORE(n, p) -> hold(p, 0)
  :: else ->
  pwp[p] = 0;
  if
  :: !known(n) || hoff[n] -> hold(p, 0)
  :: else ->
     behindHeld(n, p);
     if
     :: (!pretry[p] && zrb) || (pretry[p] && zro) -> hold(p, 0)
     :: else ->
        zrOwn = owner(vw[n]);
        behindBackTrip(n, p);
        if
        :: zrOwn == NONE -> answerC(p, NAPP)              /* CLOSED */
        :: zrOwn != NONE && backTripTo(n, pvis[p]) != 0 && (!pret[p] || zbb) ->
           pwp[p] = 1; hold(p, 0)                       /* waits for the back trip */
        :: else ->
           pathOf(n, pvis[p]);
           if
           :: zrVia == SEVERAL -> hold(p, 0)
           :: else ->
              zrTgt = zrOwn; zrq = 0;
              if
              :: zrVia != NONE && zrVia != zrOwn ->
                 if
                 :: zrOwn == n || ((unr[n] >> zrVia) & 1) -> pwp[p] = 1; hold(p, 0); zrq = 1
                 :: else -> zrTgt = zrVia                  /* follow the earlier inputs */
                 fi
              :: else -> skip
              fi;
              if
              :: zrq -> skip
              :: !zrq && zrTgt == n ->
                 if
                 :: gated(n) -> hold(p, 0)
                 :: else -> submit(n, p)
                 fi
              :: !zrq && zrTgt != n && !pretry[p] && (((pvis[p] >> zrTgt) & 1) || ((unr[n] >> zrTgt) & 1) || phop[p] >= 2 || phb[p]) ->
                 hold(p, 1)                              /* paced: views disagree, or handed back */
              :: else ->
                 pretry[p] = 0;
                 /* an old input keeps its hand-off class along the path too (ADR 0101) */
                 if
                 :: zrTgt == zrOwn -> zcls = OLD(p) || jb[n]
                 :: else -> zcls = OLD(p)
                 fi;
                 forward(n, zrTgt, p, zcls)
              fi
           fi
        fi
     fi
  fi
  fi
  fi;
  zrq = 0; zrb = 0; zbb = 0; zro = 0; zah = 0; zsa = 0
}

/* Router#flush: the held inputs of the key routed again, in their order */
inline flush(n) {
  zfj = pslot(n, 0, 0);
  do
  :: zfj < pslot(n + 1, 0, 0) ->
     if
     :: pst[zfj] == HELD -> pst[zfj] = FLUSHING; ppace[zfj] = 0
     :: else -> skip
     fi;
     zfj++
  :: else -> break
  od;
  do
  :: true ->
     zfb = NOSLOT; zfj = pslot(n, 0, 0);
     do
     :: zfj < pslot(n + 1, 0, 0) ->
        if
        :: pst[zfj] == FLUSHING && (zfb == NOSLOT || okey(zfj) < okey(zfb)) -> zfb = zfj
        :: else -> skip
        fi;
        zfj++
     :: else -> break
     od;
     if
     :: zfb == NOSLOT -> break
     :: else -> pst[zfb] = HELD; route(n, zfb)
     fi
  od;
  zfj = 0; zfb = 0
}

inline flushAll(n) {
  if
  :: known(n) && !hoff[n] -> flush(n)
  :: else -> skip
  fi
}

/* Views: awaiting, and settling (the unsettled views collapse to the view) */
inline recompute(n) {
  aw[n] = unsN[n] & mb[n] & fer[vi[n]] & ~(1 << (n)) & ~COUNTED(n);   /* a closed ferry holds nothing */
  if
  :: aw[n] == 0 -> unsN[n] = vw[n]; unsO[n] = obit(owner(vw[n]))
  :: else -> skip
  fi
}

/* ClusterNode#leave: refusing once the view without this node is settled
 * (and stays so through later views, ADR 0099) and every key was handed
 * over (Router#checkLeft) */
inline checkLeft(n) {
  if
  :: leaving[n] && known(n) && !((vw[n] >> (n)) & 1) && aw[n] == 0 -> gone[n] = 1
  :: else -> skip
  fi;
  if
  :: leaving[n] && !refusing[n] && gone[n] && hoOpen[n] == 0 -> refusing[n] = 1
  :: else -> skip
  fi
}

/* Router#maybeRelease: after the hand-offs, on the same channels, to every
 * other member (Views#releaseTargets: the view, the unsettled views and the
 * nodes whose ferry is open, i.e. announced or leaving: here every member,
 * as no node closes; ADR 0099: leaving nodes too) that it has not reached
 * yet: snapshot clears relSent when, the view unchanged, the members grew
 * (a join adopted late: ADR 0105) */
#ifdef RELLOST
/* Router#handingOffTo, as a bit set of targets: a hand-off of this node's
 * engine that came back from t (not delivered, or handed back) is held here
 * to go again (came back: pbs, its last forward's target kept: pft) */
#define HOB(n, i) (((i) < N * D && pst[(n) * N * D + (i)] == HELD && pho[(n) * N * D + (i)] && \
  pbs[(n) * N * D + (i)]) -> (1 << pft[(n) * N * D + (i)]) : 0)
#define HOTO(n) (HOB(n, 0) | HOB(n, 1) | HOB(n, 2) | HOB(n, 3) | HOB(n, 4) | HOB(n, 5) | \
  HOB(n, 6) | HOB(n, 7) | HOB(n, 8) | HOB(n, 9) | HOB(n, 10) | HOB(n, 11))
/* ADR 0159 rule 2: a lost release waits while a hand-off that came back from
 * its target is held here (one still open there does not count) */
#define LOSTWAIT(n) (relLost[n] & HOTO(n))
#define RELNOW(n) (RELTO(n) & ~relTo[n] & ~LOSTWAIT(n))
#else
#define RELNOW(n) (RELTO(n) & ~relTo[n])
#endif
inline maybeRelease(n) {
  if
  :: known(n) && !relSent[n] && hoOpen[n] == 0 ->
     relSent[n] = 1;
     zmt = RELNOW(n);
     relTo[n] = relTo[n] | zmt;
#ifdef RELLOST
     relLost[n] = relLost[n] & ~zmt;
#endif
     ztt = 0;
     do
     :: ztt < NN ->
        if
        :: (zmt >> ztt) & 1 -> netSend(n, ztt, REL, vw[n], LIFE(n))   /* with ferry-life */
        :: else -> skip
        fi;
        ztt++
     :: else -> break
     od;
     zmt = 0; ztt = 0
  :: else -> skip
  fi;
  checkLeft(n)
}

/* Router#clearPath: one forward to t answered (back: it was a back trip);
 * without fl (a snapshot's failed forwards) the caller flushes later */
inline clearPath(n, t, back, fl) {
  zbo = 0;
  if
  :: back -> bt[(n) * 3 + (t)]--; zbo = 1
  :: else -> skip
  fi;
  pc[(n) * 3 + (t)]--;
  if
  :: fl && pc[(n) * 3 + (t)] == 0 && !hoff[n] -> flush(n)
  :: fl && pc[(n) * 3 + (t)] > 0 && zbo && !hoff[n] -> flush(n)   /* what waited for the back trip */
  :: else -> skip
  fi;
  zbo = 0
}

/* Router#handedOff: one waiting input of the key handed off by the engine
 * (a new Pending of hand-off class with the place and the visited nodes of
 * the one submitted; its answer answers the original one) */
inline handedOff(n, p) {
  pho[p] = 1; phop[p] = 0; pret[p] = 0; palong[p] = 0;
  pwp[p] = 0; pretry[p] = 0; ppace[p] = 0; phb[p] = 0; pbs[p] = 0; aft[p] = 0;
  /* paseq[p] kept: its place is where it arrived here (Router#submitted) */
  /* so are its sender and its allowance (psnd: Pending#sender, #giveUpAt; ADR 0112) */
  zrOwn = owner(vw[n]);
  /* heldBehindSameSender: an earlier arrival from its sender is held here */
  zfh = 0; zfj = pslot(n, 0, 0);
  do
  :: zfj < pslot(n + 1, 0, 0) ->
     if
     :: psnd[p] && pst[zfj] == HELD && psnd[zfj] && pup[zfj] == pup[p] && paseq[zfj] < paseq[p] -> zfh = 1
     :: else -> skip
     fi;
     zfj++
  :: else -> break
  od;
  zfj = 0;
  if
  :: zrOwn == NONE -> answerC(p, NAPP)
  :: zrOwn == n -> hold(p, 0)                  /* ownership came back meanwhile */
  :: zrOwn != NONE && zrOwn != n && zfh -> hold(p, 0)   /* goes back with it, never past it */
  :: else ->
     pathOf(n, pvis[p]);
     if
     :: zrVia != NONE && zrVia != SEVERAL -> zrTgt = zrVia
     :: else -> zrTgt = zrOwn
     fi;
     zeng = 1;
     forward(n, zrTgt, p, 1);
     zeng = 0
  fi;
  zfh = 0
}

/* PerKeyEngine#finishHandOff, then the hand-off future's completion */
inline finishHandOff(n) {
  PROP(handOffAfterCall, !inflight[n]);
  do
  :: len(lane[n]) > 0 ->
     lane[n]?zhx;
     /* the fence drops to just below the smallest place handed off */
     if
     :: pinput(zhx) < fen[n] -> fen[n] = pinput(zhx)
     :: else -> skip
     fi;
     handedOff(n, zhx)
  :: else -> break
  od;
  handing[n] = 0;
  hoff[n] = 0; hoOpen[n]--;
  flush(n);
  maybeRelease(n)
}

/* Router#snapshot of snapshot s at node n */
inline snapshot(n, s) {
  /* failForwardsToNonMembers */
  zsi = pslot(n, 0, 0);
  do
  :: zsi < pslot(n + 1, 0, 0) ->
     if
     :: pst[zsi] == FWDD && !((mem[s] >> pft[zsi]) & 1) ->
        /* FAILED (may have been applied): what came back behind it never is */
        ztt = pft[zsi]; zbk = pback[zsi]; overtaken(n, zsi); answerP(zsi); answerOvertaken(n);
        clearPath(n, ztt, zbk, 0); zbk = 0; zov = 0
     :: else -> skip
     fi;
     zsi++
  :: else -> break
  od;
  /* Router#departed and #dropFromDeparted (ADR 0110): what is held here
   * from a member this node adopted that is gone now, or passed one on its
   * way, is answered CLOSED, never applied */
  dep[n] = (dep[n] | (mb[n] & ~mem[s])) & ~mem[s];
  zsi = pslot(n, 0, 0);
  do
  :: zsi < pslot(n + 1, 0, 0) ->
     if
     :: pst[zsi] == HELD && (pvis[zsi] & dep[n]) != 0 -> answerC(zsi, NAPP)
     :: else -> skip
     fi;
     zsi++
  :: else -> break
  od;
  /* sweepHandBackMarks: marks of nodes gone from the members end */
  zx = 0;
  do
  :: zx < N ->
     if
     :: ((mk[n] >> zx) & 1) && !((mem[s] >> mks[(n) * N + zx]) & 1) && dead[mks[(n) * N + zx]] ->
        mk[n] = mk[n] & ~(1 << zx); mks[(n) * N + zx] = 0
     :: else -> skip
     fi;
     zx++
  :: else -> break
  od;
  zx = 0;
  /* Views#adopt */
  zsnv = VIEW(s);
  zsch = (!known(n) || zsnv != vw[n]);
  mb[n] = mem[s];
#if defined(LIVES) || defined(REDEPLOY)
  alife[n] = (((fer[s] >> B) & 1) -> SLIFE(s) : 0);
#endif
  if
  :: zsch ->
     if
     :: !known(n) ->
        /* before it joined, the others owned every key, the leaving ones too */
        zmt = (zsnv | (mem[s] & ~ann[s])) & ~(1 << (n));
        unsN[n] = unsN[n] | zmt;
        unsO[n] = unsO[n] | obit(owner(zmt));
        zmt = 0;
        jb[n] = 0
     :: else -> jb[n] = (owner(vw[n]) == n)
     fi;
     kn[n] = 1; vw[n] = zsnv;
     unsN[n] = unsN[n] | zsnv; unsO[n] = unsO[n] | obit(owner(zsnv))
  :: else -> skip
  fi;
  recompute(n);
  if
#ifdef RELLOST
  :: zsch -> relSent[n] = 0; relTo[n] = 0; relLost[n] = 0; unr[n] = 0; hoOpen[n]++   /* handOffLostKeys */
#else
  :: zsch -> relSent[n] = 0; relTo[n] = 0; unr[n] = 0; hoOpen[n]++   /* handOffLostKeys */
#endif
  /* the view unchanged, a node that waits for its release now (ADR 0105) */
  :: !zsch && (RELTO(n) & ~relTo[n]) != 0 -> relSent[n] = 0
  :: else -> skip
  fi;
  flushAll(n);
  maybeRelease(n);
  /* the activeKeys effect (after the transition's routing decisions) */
  if
  :: zsch ->
     zrOwn = owner(vw[n]);
     if
     :: (inflight[n] || len(lane[n]) > 0) && zrOwn != NONE && zrOwn != n && !hoff[n] ->
        hoff[n] = 1; hoOpen[n]++;
        hoOpen[n]--; maybeRelease(n);
        /* ferry.handOff: now if no call is in flight, else when it ends */
        handing[n] = 1;
        if
        :: !inflight[n] -> finishHandOff(n)
        :: else -> skip
        fi
     :: else -> hoOpen[n]--; maybeRelease(n)
     fi
  :: else -> skip
  fi;
  zsi = 0; zsnv = 0; zsch = 0; ztt = 0
}

/* a forward or request accepted at node m: a new Pending */
inline accept(am, ax, afrom, aupid, aflags) {
  zrq = pslot(am, ax, 0);
  do
  :: zrq < pslot(am, ax, D - 1) && pst[zrq] != FREE -> zrq++
  :: else -> break
  od;
  PROP(modelBound, pst[zrq] == FREE);
  pup[zrq] = afrom; pupid[zrq] = aupid;
  if
  ::  afrom != CL ->
     psnd[zrq] = 1; phop[zrq] = (aflags) & 3; pho[zrq] = ((aflags) >> 2) & 1; pvis[zrq] = ((aflags) >> 3) & 15;
     if
     :: ((aflags) >> 7) & 1 -> hoT[(afrom) * NN + am]--
     :: else -> skip
     fi
  :: else -> skip
  fi;
  pst[zrq] = FLUSHING;           /* being routed */
  zwk = zrq;
  route(am, zwk);
  zwk = 0
}

/* one node's event loop */
proctype Node(byte n) {
  byte m, k, a, b;
end:
  do
  /* a message from party m */
  :: atomic {
       !dead[n] && (NETIN(n) || nempty(net[CL * NP + n]) NHIN(n)) ->
       if
       :: net[0 * NP + n]?k, a, b -> m = 0
       :: net[1 * NP + n]?k, a, b -> m = 1
#if NN == 3
       :: net[2 * NP + n]?k, a, b -> m = 2
#endif
       :: net[CL * NP + n]?k, a, b -> m = CL
#ifdef RELLOST
       /* a send of this node's not delivered (NO_HANDLERS) */
       :: nh[n]?k, a, b -> m = LAGT;
          if
          :: (b >> 7) & 1 ->
             hoT[n * NN + m]--;      /* a hand-off: owed to m, not on its way */
             b = b & 127;
             if
             :: pst[a] == FWDD && pft[a] == m -> gow[a] = 1
             :: else -> skip
             fi
          :: else -> skip
          fi
#endif
       fi;
       if
#ifdef RELLOST
       /* Router#releaseNotDelivered: lost if still the view's, sent again later */
       :: k == RELF ->
          if
          :: known(n) && a == vw[n] && ((relTo[n] >> m) & 1) ->
             relTo[n] = relTo[n] & ~(1 << m); relLost[n] = relLost[n] | (1 << m)
          :: else -> skip
          fi
#endif
       :: k == REQ && refusing[n] -> netSend(n, CL, REP, a, GONE)
       /* behind the fence (Router#behindFence): 503 CLOSED, never applied */
       :: k == REQ && !refusing[n] && behindFence(n, a, 0) -> fenceRefused(a, 0); netSend(n, CL, REP, a, NAPP)
       :: k == REQ && !refusing[n] && !behindFence(n, a, 0) -> accept(n, a, CL, a, 0)
       :: k == FWD && (refusing[n] || behindFence(n, pinput(a), (b >> 3) & 15)) ->
          if
          :: (b >> 7) & 1 -> hoT[m * NN + n]--
          :: else -> skip
          fi;
          if
          :: refusing[n] -> netSend(n, m, REP, a, GONE)
          :: else -> fenceRefused(pinput(a), (b >> 3) & 15); netSend(n, m, REP, a, NAPP)
          fi
       :: k == FWD && !refusing[n] && !behindFence(n, pinput(a), (b >> 3) & 15) -> accept(n, pinput(a), m, a, b)
       :: k == REL ->
#ifdef RELLOST
          /* the release arrives behind the hand-offs it speaks for (ADR 0051,
           * 0159): none of its sender's is on its way here or owed here */
          PROP(handOffsFirst, HOFROM(m, n));
#endif
          /* Router#released: the first release of another life at m's id
           * (Views#newLife) voids every release recorded from m, and m is
           * sent this node's release again (releasedTo.remove, maybeRelease);
           * awaiting is not recomputed there (ADR 0131) */
          if
          :: heard[n * NN + m] != 0 && heard[n * NN + m] != b ->
             zx = 0;
             do
             :: zx < 8 ->
                rel[n * 8 + zx] = rel[n * 8 + zx] & ~(1 << m);
                relOld[n * 8 + zx] = relOld[n * 8 + zx] & ~(1 << m);
                zx++
             :: else -> break
             od;
             zx = 0;
             relTo[n] = relTo[n] & ~(1 << m); relSent[n] = 0;
             maybeRelease(n)
          :: else -> skip
          fi;
          heard[n * NN + m] = b;
          rel[n * 8 + a] = rel[n * 8 + a] | (1 << m);
          if
          :: known(n) && a == vw[n] -> recompute(n); flushAll(n); checkLeft(n)  /* ADR 0099 */
          :: else -> skip
          fi
       :: k == REP ->
          /* Router#forwarded: ignored unless its forward is still open; at a
           * closed node lost (its Vert.x may have closed: Router#close) */
          if
          :: !closed[n] && pst[a] == FWDD && pft[a] == m ->
             zbk = pback[a]; zov = 0;
             if
             :: b == GONE || b == BACK ->
                /* not delivered: held in its place, paced; it waits behind what
                 * went out from here after it (waitBehindSent, ADR 0115); a
                 * hand-back leaves its target reachable (ADR 0112) */
                cameBack[pinput(a)] = 1;
                if
                :: pot[a] ->
                   /* a later input sent after it may have been applied
                    * meanwhile (overtakeOpen): never sent again (ADR 0144) */
                   answerC(a, NAPP); zov = ABIT(a)
                :: else ->
                   if
                   :: b == GONE -> unr[n] = unr[n] | (1 << m)
                   :: else -> phb[a] = 1
                   fi;
                   pretry[a] = 0; pbs[a] = 1; hold(a, 1)
                fi
             :: else ->
                /* relayed unchanged; if it may have been applied, what came back
                 * here behind it never is (mayHaveApplied, overtaken) */
                if
                :: b == ANS || b == GIVEN -> overtaken(n, a); overtakeOpen(n, a)
                :: else -> skip
                fi;
                if
                :: b == GIVEN ->
                   /* Router#keepGivenUp: while the holds it allowed may not be
                    * over, its forward stays in openByOrigin (or they are over) */
                   PROP(exactlyOnce, pst[a] != FREE);
                   netSendTo(n, a, GIVEN);
                   if
                   :: pst[a] = KEPT
                   :: freeP(a)
                   fi
                :: else -> answerC(a, b)
                fi;
                answerOvertaken(n)
             fi;
             clearPath(n, m, zbk, 1);
             sentAfterAnswered(n, pinput(a));
             if
             :: zov != 0 && !hoff[n] && ANYHELD(n) -> flush(n)    /* flushHeld */
             :: else -> skip
             fi;
             zov = 0;
             checkLeft(n)
          :: else -> skip
          fi
       fi;
       m = 0; k = 0; a = 0; b = 0
     }
  /* the next membership snapshot reaches this node */
  :: atomic {
       UP(n) && vi[n] < pub ->
       if
       :: true -> zss = vi[n] + 1
       :: vi[n] + 1 < pub -> zss = pub                    /* an intermediate one skipped */
       fi;
       vi[n] = zss;
       snapshot(n, zss);
       zss = 0
     }
#ifdef GIVEUP
  /* the leave outlasts drainTimeoutMs: Router#abandonForwards (giveUpOpenForwards):
   * every open forward 502 given up, counted first (overtaken), then what is held
   * here behind a given-up input of its client (CLOSED), then the keys routed
   * again; the leave completes, the node refuses (ClusterNode#leave) */
  :: atomic {
       UP(n) && leaving[n] && !abandoned[n] ->
       abandoned[n] = 1; zgv = 0;
       zsi = pslot(n, 0, 0);
       do
       :: zsi < pslot(n + 1, 0, 0) ->
          if
          :: pst[zsi] == FWDD ->
             overtaken(n, zsi);
             if
             :: gvp[n] == 0 || pinput(zsi) + 1 < gvp[n] -> gvp[n] = pinput(zsi) + 1
             :: else -> skip
             fi;
             answerC(zsi, GIVEN);
             answerOvertaken(n);
             zgv = zgv || zov != 0; zov = 0
          :: else -> skip
          fi;
          zsi++
       :: else -> break
       od;
       /* paths.clear(), backTrips.clear() */
       zsi = 0;
       do
       :: zsi < 3 -> pc[n * 3 + zsi] = 0; bt[n * 3 + zsi] = 0; zsi++
       :: else -> break
       od;
       zsi = pslot(n, 0, 0);
       do
       :: zsi < pslot(n + 1, 0, 0) ->
          if
          :: pst[zsi] == HELD && gvp[n] != 0 && pinput(zsi) + 1 > gvp[n] -> answerC(zsi, NAPP); zgv = 1
          :: else -> skip
          fi;
          zsi++
       :: else -> break
       od;
       zsi = 0;
       if
       :: zgv && !hoff[n] && ANYHELD(n) -> flush(n)
       :: else -> skip
       fi;
       zgv = 0;
       refusing[n] = 1
     }
  /* a kept given-up forward's holds are over (Router#keepGivenUp's timer):
   * what came back behind it never is applied (overtaken), the key goes on */
  :: atomic {
       UP(n) && ANYKEPT(n) ->
       zsi = pslot(n, 0, 0);
       do
       :: zsi < pslot(n + 1, 0, 0) && pst[zsi] == KEPT -> break
       :: zsi < pslot(n + 1, 0, 0) -> zsi++
       :: else -> break
       od;
       if
       :: zsi < pslot(n + 1, 0, 0) && pst[zsi] == KEPT ->
          overtaken(n, zsi);
          freeP(zsi);
          answerOvertaken(n);
          zov = 0;
          if
          :: !hoff[n] && ANYHELD(n) -> flush(n)
          :: else -> skip
          fi;
          checkLeft(n)
       :: else -> skip
       fi;
       zsi = 0
     }
#endif
#ifdef STO
  /* a forward's send timeout between live nodes (Forward#sendTimeoutMs): 502
   * "did not answer in time (it may have applied the input)", as any answer
   * that says it may have been applied (Router#forwarded: mayHaveApplied,
   * overtaken, clearPath, sentAfterAnswered); the late reply is dropped by the
   * event bus. ADR 0109's rule: a hold downstream ends (a hand-back) before
   * that timeout, so it fires only once the input is in an owner's ferry down
   * the forward's chain, never held (timeoutDue). STO times a run. */
  :: atomic {
       UP(n) && sto > 0 && ANYFWD(n) ->
       zsi = pslot(n, 0, 0);
       do
       :: zsi < pslot(n + 1, 0, 0) && pst[zsi] == FWDD && !dead[pft[zsi]] && WIREQUIET(pft[zsi], n) ->
          timeoutDue(zsi);
          if
          :: ztd != NOSLOT -> break
          :: else -> zsi++
          fi
       :: zsi < pslot(n + 1, 0, 0) -> zsi++
       :: else -> break
       od;
       if
       :: zsi < pslot(n + 1, 0, 0) && ztd != NOSLOT ->
          sto--;
          pupid[ztd] = NOSLOT;
          zbk = pback[zsi]; ztt = pft[zsi];
          overtaken(n, zsi); overtakeOpen(n, zsi); answerC(zsi, ANS); answerOvertaken(n);
          clearPath(n, ztt, zbk, 1);
          sentAfterAnswered(n, pinput(zsi));
          if
          :: zov != 0 && !hoff[n] && ANYHELD(n) -> flush(n)    /* flushHeld */
          :: else -> skip
          fi;
          zov = 0; zbk = 0; ztt = 0;
          checkLeft(n)
       :: else -> skip
       fi;
       zsi = 0; ztd = 0
     }
#endif
#ifdef CLOSE
  /* FerryVerticle#stop: the leave ended (as planned: nothing that arrived
   * before is held or open here, Router#leaving(true), #idle; or given up:
   * Router#abandonForwards), the ferry drained (no call, no hand-off), then
   * ClusterNode#close -> Router#close: what is held here is answered CLOSED,
   * every open forward 502 given up (#giveUpOpenForwards: made after a
   * give-up, a key handed off once its call ended); nothing held is left to
   * wait behind them. The node keeps refusing (its registrations are gone:
   * NO_HANDLERS) and hears no answer of a forward any more. */
  :: atomic {
       UP(n) && refusing[n] && !inflight[n] && !handing[n] && len(lane[n]) == 0 &&
       (abandoned[n] || !(ANYHELD(n) || ANYFWD(n))) ->
       closed[n] = 1;
       zsi = pslot(n, 0, 0);
       do
       :: zsi < pslot(n + 1, 0, 0) ->
          if
          :: pst[zsi] == HELD -> answerC(zsi, NAPP)                      /* CLOSED */
          :: else -> skip
          fi;
          zsi++
       :: else -> break
       od;
       zsi = pslot(n, 0, 0);
       do
       :: zsi < pslot(n + 1, 0, 0) ->
          if
          :: pst[zsi] == FWDD -> answerC(zsi, GIVEN)                     /* 502 */
          :: else -> skip
          fi;
          zsi++
       :: else -> break
       od;
       zsi = 0;
       do
       :: zsi < 3 -> pc[n * 3 + zsi] = 0; bt[n * 3 + zsi] = 0; zsi++
       :: else -> break
       od;
       zsi = 0
     }
#endif
  /* Views#ownedJustBefore's window passes */
  :: atomic { !dead[n] && jb[n] -> jb[n] = 0 }
#ifdef RELLOST
  /* a later snapshot of the same membership (read every second, ADR 0113):
   * Router#maybeRelease sends a lost release again unless a hand-off that
   * came back from its target is held here (ADR 0159 rule 2); the failures
   * of this node's sends (a local lookup) came back before it (NHQUIET). Its flush is
   * left out: nothing held changes with the view unchanged */
  :: atomic {
       UP(n) && known(n) && hoOpen[n] == 0 && (RELNOW(n) & relLost[n]) != 0 && NHQUIET(n) ->
       relSent[n] = 0; maybeRelease(n)
     }
#endif
  /* a hand-back mark ends (HandBackMark#end: its sender no longer sends that
   * input again); what the sender sent before it saw the hand-back may still
   * be on the wire (the slow wire of ADR 0115) */
  :: atomic {
       !dead[n] && mk[n] != 0 ->
       if
       :: mk[n] & 1 -> zx = 0
       :: mk[n] & 2 -> zx = 1
       :: mk[n] & 4 -> zx = 2
       :: mk[n] & 8 -> zx = 3
       fi;
       mk[n] = mk[n] & ~(1 << zx); mks[n * N + zx] = 0; zx = 0
     }
  /* a held input's pause (RETRY_MS) ends: it may go on once more */
  :: atomic {
       UP(n) && (conv || budget > 0) && ANYPACED(n) && NHQUIET(n) ->
       zei = pslot(n, 0, 0);
       do
       :: zei < pslot(n + 1, 0, 0) && pst[zei] == HELD && ppace[zei] -> break
       :: zei < pslot(n + 1, 0, 0) -> zei++
       :: else -> break
       od;
       if
       :: zei < pslot(n + 1, 0, 0) && pst[zei] == HELD && ppace[zei] ->
          if :: !conv -> budget-- :: else -> skip fi;
          ppace[zei] = 0; pretry[zei] = 1;
          if
          :: !hoff[n] -> flush(n)
          :: else -> skip
          fi
       :: else -> skip
       fi;
       zei = 0
     }
#ifndef NO_EXPIRY
  /* a hold ends (drainTimeout + 2 x callTimeout from the first hold, ADR 0099, or the caller's
   * deadline): CLOSED or TIMEOUT */
  :: atomic {
       UP(n) && ANYHELD(n) && NHQUIET(n) ->
       zei = pslot(n, 0, 0);
       do
       :: zei < pslot(n + 1, 0, 0) && pst[zei] == HELD -> break
       :: zei < pslot(n + 1, 0, 0) -> zei++
       :: else -> break
       od;
       if
       :: zei < pslot(n + 1, 0, 0) && pst[zei] == HELD ->
          /* only the first held input, or one come along the path or back,
           * may be what the others wait behind (ADR 0100) */
          zbl = 1; zfj = pslot(n, 0, 0);
          do
          :: zfj < pslot(n + 1, 0, 0) ->
             if
             :: pst[zfj] == HELD && okey(zfj) < okey(zei) -> zbl = 0
             :: else -> skip
             fi;
             zfj++
          :: else -> break
          od;
          zbl = zbl || OLD(zei);
          /* or a paced retry of its sender waits behind it (ADR 0106) */
          zfj = pslot(n, 0, 0);
          do
          :: zfj < pslot(n + 1, 0, 0) ->
             if
             :: zfj != zei && pst[zfj] == HELD && pretry[zfj] && pinput(zei) < pinput(zfj) -> zbl = 1
             :: else -> skip
             fi;
             zfj++
          :: else -> break
          od;
          zfj = 0;
          if
          :: psnd[zei] && hbud > 0 ->
             /* forwarded here: its hold ends at Pending#giveUpAt (its deadline
              * is later unless nearly over: Forward#holdMs is at most half of
              * what is left, at least 1 ms), and it goes back to its sender
              * unapplied, with what is held of the same node's later arrivals
              * and of the client's later inputs, in their order
              * (Router#holdEnded, ADRs 0109, 0112); HB times in a run */
             zov = 0; zfj = pslot(n, 0, 0);
             do
             :: zfj < pslot(n + 1, 0, 0) ->
                if
                :: pst[zfj] == HELD && psnd[zfj] && zfj != zei &&
                   ((pup[zfj] == pup[zei] && paseq[zfj] > paseq[zei]) || pinput(zfj) > pinput(zei)) -> zov = zov | ABIT(zfj)
                :: else -> skip
                fi;
                zfj++
             :: else -> break
             od;
             hbud--;
             returnToSender(n, zei);
             do
             :: true ->
                zfk = NOSLOT; zfj = pslot(n, 0, 0);
                do
                :: zfj < pslot(n + 1, 0, 0) ->
                   if
                   :: pst[zfj] == HELD && (zov & ABIT(zfj)) != 0 && (zfk == NOSLOT || okey(zfj) < okey(zfk)) -> zfk = zfj
                   :: else -> skip
                   fi;
                   zfj++
                :: else -> break
                od;
                if
                :: zfk == NOSLOT -> break
                :: else ->
                   /* the first held, or old: what the rest may wait behind */
                   zfh = 1; zfj = pslot(n, 0, 0);
                   do
                   :: zfj < pslot(n + 1, 0, 0) ->
                      if
                      :: pst[zfj] == HELD && okey(zfj) < okey(zfk) -> zfh = 0
                      :: else -> skip
                      fi;
                      zfj++
                   :: else -> break
                   od;
                   zbl = zbl || zfh || OLD(zfk);
                   returnToSender(n, zfk)
                fi
             od;
             zfk = 0; zfj = 0; zfh = 0; zov = 0
          /* TIMEOUT (a forwarded input's deadline, nearly over when forwarded,
           * passes first) or CLOSED (the hold bound) */
          :: else -> answerC(zei, NAPP)
          :: psnd[zei] && hbud > 0 -> answerC(zei, NAPP)
          fi;
          if
          :: zbl && !hoff[n] && ANYHELD(n) -> flush(n)      /* those held behind it go on */
          :: else -> skip
          fi;
          zbl = 0;
          checkLeft(n)
       :: else -> skip
       fi;
       zei = 0
     }
#endif
  od
}

/* the downstream call of node n's engine; its completion runs on n's loop */
proctype Call(byte n) {
end:
  do
  :: atomic {
       inflight[n] ->
       wire--;
       if
       :: dead[n] -> skip                        /* nobody hears of it */
       :: else ->
          zci = 0;
          do
          :: zci < NPEND ->
             if
             :: (callMem[n] >> zci) & 1 && pst[zci] == ENG -> answerP(zci)
             :: else -> skip
             fi;
             zci++
          :: else -> break
          od
       fi;
       inflight[n] = 0; callMem[n] = 0; over[n] = 0; zci = 0;
       if
       :: dead[n] -> skip
       :: !dead[n] && handing[n] -> finishHandOff(n)
       :: else -> dispatch(n)
       fi
     }
  /* the call timeout: its callers fail now, the key stays in flight */
  :: atomic {
       inflight[n] && !over[n] && !dead[n] ->
       over[n] = 1;
       zci = 0;
       do
       :: zci < NPEND ->
          if
          :: (callMem[n] >> zci) & 1 && pst[zci] == ENG -> answerP(zci); callMem[n] = callMem[n] & ~(1 << zci)
          :: else -> skip
          fi;
          zci++
       :: else -> break
       od;
       zci = 0
     }
  od
}

/* ---------------------------------------------------------- the routing client */

inline clientAnswer(x) {
  PROP(exactlyOnce, cst[x] == 1);
  cst[x] = 2
}

inline csend(t, x) {
  ctgt = t; cinf++; csnd[x] = t;
  netSend(CL, t, REQ, x, 0)
}

/* ClientRouter#forget: the key's state goes once nothing is in flight or waiting */
inline cforget() {
  if
  :: cinf == 0 && len(cwait) == 0 && !cgu -> cretry = 0; ctgt = 0
  :: else -> skip
  fi
}

/* ClientRouter#sendWaiting */
inline sendWaiting(anyway) {
  if
  :: cinf == 0 && len(cwait) > 0 && !cgu && cowner != NONE ->
     zwx = cowner;
     if
     :: !(anyway) && ((cunr >> zwx) & 1) -> cretry = 1      /* retryLater */
     :: else ->
        do
        :: len(cwait) > 0 -> cwait?zwk; csend(zwx, zwk)
        :: else -> break
        od
     fi
  :: else -> skip
  fi;
  cforget();
  zwx = 0; zwk = 0
}

proctype Client() {
  byte seq, m, k, a, b;
end:
  do
  /* ClientRouter#submit, in order */
  :: atomic {
       seq < N ->
       cst[seq] = 1;
       if
       :: len(cwait) > 0 -> cwait!!seq
       :: len(cwait) == 0 && cgu -> cwait!!seq                    /* givenUpWait */
       :: len(cwait) == 0 && !cgu && cinf > 0 -> zwx = ctgt; csend(zwx, seq); zwx = 0  /* behind the earlier ones */
       :: len(cwait) == 0 && !cgu && cinf == 0 && (cowner == NONE || ((cunr >> cowner) & 1)) ->
          cwait!!seq;
          if
          :: cowner != NONE -> cretry = 1
          :: else -> skip
          fi
       :: else -> zwx = cowner; csend(zwx, seq); zwx = 0
       fi;
       cforget();
       seq++
     }
  /* an outcome from node m (ClientRouter#sent) */
  :: atomic {
       NETIN(CL) ->
       if
       :: net[0 * NP + CL]?k, a, b -> m = 0
       :: net[1 * NP + CL]?k, a, b -> m = 1
#if NN == 3
       :: net[2 * NP + CL]?k, a, b -> m = 2
#endif
       fi;
       if
       :: csnd[a] == m ->
          csnd[a] = NONE; cinf--;
          if
          :: b == GONE ->
             /* not delivered: back among the waiting, in its place */
             cunr = cunr | (1 << m); cleav = cleav | (1 << m);
             cwait!!a; cretry = 1
          :: b == GIVEN -> clientAnswer(a); cgu = 1   /* later requests wait (givenUpUntil) */
          :: else ->
             /* an answer that says never applied (503 CLOSED, 504) is true */
             PROP(notAppliedTrue, b != NAPP || !sent[a]);
             clientAnswer(a)
          fi;
          sendWaiting(0)
       :: else -> skip                       /* its send had timed out */
       fi;
       m = 0; k = 0; a = 0; b = 0
     }
  /* the next membership snapshot */
  :: atomic {
       cvi < pub ->
       if
       :: true -> zss = cvi + 1
       :: cvi + 1 < pub -> zss = pub
       fi;
       cvi = zss;
       cleav = cleav & VIEW(zss);
       if
       :: ckn && VIEW(zss) == cvw -> skip
       :: else -> ckn = 1; cvw = VIEW(zss); cunr = 0; sendWaiting(0)
       fi;
       zss = 0
     }
  /* the wait behind a given-up request ends (KeyState#givenUpTimer) */
  :: atomic { cgu -> cgu = 0; sendWaiting(0) }
  /* the retry timer */
  :: atomic { cretry -> cretry = 0; sendWaiting(1) }
#ifndef NO_EXPIRY
  /* a waiting request passes its deadline or send timeout: never sent */
  :: atomic {
       len(cwait) > 0 ->
       a = 0;
       do
       :: a < N && cwait??[eval(a)] -> break
       :: a < N -> a++
       :: else -> break
       od;
       if
       :: a < N && cwait??[eval(a)] -> cwait??eval(a); clientAnswer(a); cforget()
       :: else -> skip
       fi;
       a = 0
     }
#endif
  /* a send to a crashed node times out (event bus TIMEOUT): to the caller */
  :: atomic {
       ANYCDEAD ->
       a = 0;
       do
       :: CDEAD(a) -> break
       :: a < N -> a++
       :: else -> break
       od;
       if
       :: CDEAD(a) ->
          csnd[a] = NONE; cinf--; clientAnswer(a); sendWaiting(0)
       :: else -> skip
       fi;
       a = 0
     }
  od
}

/* ---------------------------------------------------------- membership */

proctype Env() {
#if defined(TRIO)
  /* publish S1 .. S(NS-1) in order: a member that is gone crashed, an
   * announced member no longer announced leaves (once it has started) */
  byte s = 1, x;
  do
  :: s < NS ->
     atomic {
       (ann[s - 1] & mem[s] & ~ann[s] & ~(kn[A] | (kn[B] << 1) | (kn[C] << 2))) == 0 ->
       x = 0;
       do
       :: x < NN ->
          if
          :: ((mem[s - 1] & ~mem[s]) >> x) & 1 -> dead[x] = 1; crashed = 1
          :: ((ann[s - 1] & mem[s] & ~ann[s]) >> x) & 1 -> leaving[x] = 1
          :: else -> skip
          fi;
          x++
       :: else -> break
       od;
       x = 0;
       pub = s;
       s++
     }
  :: else -> break
  od;
  s = 0
#elif defined(LEAVE) && defined(CLOSE)
  atomic { leaving[A] = 1; pub = 1 }          /* A withdraws its announcement */
  atomic { closed[A] -> pub = 2 }             /* A's ferry closed: no longer leaving (HazelcastMembership) */
#elif defined(LEAVE)
  atomic { leaving[A] = 1; pub = 1 }          /* A withdraws its announcement */
#elif defined(CRASH)
  atomic { dead[A] = 1; crashed = 1; pub = 1 }
#elif defined(REDEPLOY)
  pub = 1                                      /* the same nodes: B's new ferry reads it */
#elif defined(REJOIN) && defined(LIFEHEARD)
  /* ADR 0131's premise: B's first release, which carries its life, reaches A
   * before A adopts the view B leaves in (published here only then) */
  pub = 1;
  atomic { kn[B] && vi[B] == 1 && heard[A * NN + B] == LIFE(B) -> leaving[B] = 1; pub = 2 }
#elif defined(REJOIN)
  pub = 1;
  atomic { kn[B] && vi[B] == 1 -> leaving[B] = 1; pub = 2 }   /* B leaves again */
#elif defined(RELLOST)
  pub = 1;                                     /* B joins */
  lag = 0                                      /* A sees B's peer registration (ADR 0148's lag ends) */
#else
  pub = 1                                      /* B joins */
#endif
}

/* when nothing can move any more */
proctype Auditor() {
  byte x;
  timeout ->
  atomic {
    do
    :: x < N -> PROP(stranded, cst[x] == 2); x++
    :: else -> break
    od;
    x = 0;
    do
    :: x < NPEND -> PROP(nothingOpen, pst[x] == FREE || dead[pnode(x)]); x++
    :: else -> break
    od;
    x = 0;
    /* a leave ends: every leaving node refuses in the end (ADR 0056, 0099) */
    do
    :: x < NN -> PROP(leaveEnds, !leaving[x] || dead[x] || refusing[x]); x++
    :: else -> break
    od;
    x = 0;
    /* no node waits for ever for a release (Views#settled; a closed one waits no more) */
    do
    :: x < NN -> PROP(settles, !UP(x) || !known(x) || aw[x] == 0); x++
    :: else -> break
    od;
    x = 0
  }
}

init {
  atomic {
    byte i;
    do
    :: i < N -> csnd[i] = NONE; i++
    :: else -> break
    od;
    i = 0;
#if defined(TRIO)
    /* the scenario: S<i>M members, S<i>A announced (bitmasks), the ranking */
    rank0 = RANK0; rank1 = RANK1;
    mem[0] = S0M; ann[0] = S0A; mem[1] = S1M; ann[1] = S1A;
#if NS > 2
    mem[2] = S2M; ann[2] = S2A;
#endif
    i = 0;
    do
    :: i < NN ->
       if
       :: (VIEW(0) >> i) & 1 ->
          kn[i] = 1; vw[i] = VIEW(0); mb[i] = mem[0]; unsN[i] = VIEW(0);
          unsO[i] = obit(owner(VIEW(0))); relSent[i] = 1; relTo[i] = RELTO(i);
          /* the releases of S0 each sent at start, received (Views#releases
           * keeps them per view: one that comes back to S0 counts them) */
          rel[i * 8 + VIEW(0)] = VIEW(0) & ~(1 << i)
       :: else ->                 /* joins later: sees the snapshots from then on */
          do
          :: vi[i] + 1 < NS && !((mem[vi[i] + 1] >> i) & 1) -> vi[i]++
          :: else -> break
          od
       fi;
       i++
    :: else -> break
    od;
    ckn = 1; cvw = VIEW(0);
#elif defined(LEAVE) || defined(CRASH)
    rank0 = A; rank1 = B;
    mem[0] = 3; ann[0] = 3;
#if defined(LEAVE)
    mem[1] = 3; ann[1] = 2;
#else
    mem[1] = 2; ann[1] = 2;
#endif
    kn[A] = 1; vw[A] = 3; mb[A] = 3; unsN[A] = 3; unsO[A] = 1;
    kn[B] = 1; vw[B] = 3; mb[B] = 3; unsN[B] = 3; unsO[B] = 1;
    relSent[A] = 1; relSent[B] = 1; relTo[A] = RELTO(A); relTo[B] = RELTO(B);
    ckn = 1; cvw = 3;
#elif defined(REDEPLOY)
    /* S0 = S1 = {A, B}, B owns; A settled on S0, its release sent to B's
     * closed ferry (relTo), whose release of S0 (life 1) it has; B's ferry
     * of the run (life 2) reads S1 first. B's Vert.x node stays a member. */
    rank0 = B; rank1 = A;
    mem[0] = 3; ann[0] = 3; mem[1] = 3; ann[1] = 3;
    kn[A] = 1; vw[A] = 3; mb[A] = 3; unsN[A] = 3; unsO[A] = 2; relSent[A] = 1; relTo[A] = 2;
    relOld[A * 8 + 3] = 2; heard[A * NN + B] = 1; alife[A] = 1;
    ckn = 1; cvw = 3;
#else
    rank0 = B; rank1 = A;
    mem[0] = 1; ann[0] = 1;
    mem[1] = 3; ann[1] = 3;
#if defined(REJOIN)
    mem[2] = 3; ann[2] = 1;
#endif
#if defined(LIVES)
    /* B's closed ferry (life 1) released view {A} to A before the run: its
     * Vert.x node had no open ferry in S0, which Views counts as no member
     * (Views#recompute and #releaseTargets keep only open ferries) */
    relOld[A * 8 + 1] = 2; heard[A * NN + B] = 1;
#endif
    kn[A] = 1; vw[A] = 1; mb[A] = 1; unsN[A] = 1; unsO[A] = 1; relSent[A] = 1;
    ckn = 1; cvw = 1;
#endif
    /* every member's ferry open, but A's in the last snapshot of a leave that closes */
    i = 0;
    do
    :: i < NS -> fer[i] = mem[i]; i++
    :: else -> break
    od;
#if defined(LEAVE) && defined(CLOSE)
    mem[2] = 3; ann[2] = 2; fer[2] = 2;
#endif
    run Node(A); run Node(B);
    run Call(A); run Call(B);
#if NN == 3
    run Node(C); run Call(C);
#endif
    run Client();
    run Env();
    run Auditor()
  }
}
