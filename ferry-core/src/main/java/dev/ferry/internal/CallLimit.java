package dev.ferry.internal;

import java.util.Arrays;

/**
 * How many calls a per-key ferry may have on the wire: learned from the downstream's latency
 * (ADR 0012), or pinned.
 *
 * <h2>Design</h2>
 *
 * A call's latency grows with its batch, so each sample is compared with the <em>floor</em> of its
 * batch-size class ({@code floor(log2(size))}): the lowest round mean seen for that class, among
 * rounds in which it had at least {@link #MIN_CLASS} calls (the mean of one or two calls of a
 * heavy-tailed downstream is its fastest call, not its typical one; ADR 0068), and after slow start
 * a floor falls only as far as two such rounds in a row agree (the higher of their means: the
 * lowest of hundreds of noisy means is a lucky round, not the typical one; ADR 0152). A class met
 * for the first time takes its round mean less the queueing the other classes show, but never less than the
 * floor curve gives its batch size (ADR 0020), nor, by the queueing taken off, less than a smaller
 * batch's floor (ADR 0151). Samples are judged in rounds: a round takes the calls that started
 * after it began and ends once it holds {@code max(16, limit)} of them. At its end, {@code r}, the
 * median call's latency over its floor, says how much of the time was queueing: by Little's law the
 * downstream serves calls in flight / r of them at once and the rest wait in its queue. A queue of
 * more calls than {@link #queueAllowance} (the square root of the calls served, or {@link
 * #TOLERANCE} of them where that is less; ADR 0076) drops the limit to the calls served plus that
 * allowance; otherwise, if the limit held calls back, it probes up. The allowance is counted in
 * calls, like TCP Vegas's few packets in the bottleneck's queue, not as a share of latency: a share
 * lets a pool of 64 keep 26 calls waiting where their batches cannot grow, the square root keeps 8.
 * The median decides whether a round queued, but a cut leaves the calls served read on the mean
 * latency where that says more (ADR 0150): by Little's law the calls in flight over the mean
 * latency are what the downstream completes, while a queue that drains in waves puts the median on
 * the step of the calls that waited a whole call time. The round after a cut is not judged (its
 * calls queued behind the ones started before the cut). A deep cut that does not bring latency down
 * in the round after that, below the worst round of its streak of cuts (ADR 0153), was not our
 * queue (a slower downstream, a busy machine): it is undone and the floors move up to what calls
 * take now. Otherwise floors only fall between re-measurements;
 * every {@link #FLOOR_PERIOD_NANOS} one round runs at 60% of the limit and its class means replace
 * the floors, so a queue never becomes the floor and a downstream that got slower for good is
 * learned (a floor round due while a cut settles waits a round: its calls would queue behind those
 * started before the cut).
 *
 * <p>Slow start (from 1, until the first cut or back-off): a round is one wave, as many calls as
 * the limit, and a wave the limit held back doubles it, so the limit reaches 16 calls in flight
 * after four call times, as TCP's window doubles per round trip (ADR 0020). Its floors come from
 * waves of 1, 2, 4 ... calls with small batches, so once its first cut has settled the floors are
 * re-measured at once (a floor round) instead of a floor period later.
 *
 * <p>Latency can rise for reasons that are not a queue (batches that grew, a busy machine, a cache
 * that misses), so every cut of at least {@link #TRIAL_CUT} of the limit is a trial judged by
 * throughput (a smaller one could cost less than one round's noise, ADR 0020): the inputs per
 * second the round after next delivers (by Little's law: calls in flight x inputs per call /
 * latency). A cut that held calls back and cost more than {@link #LOSS} of them, without latency
 * over floor rising (it rises when the downstream itself slows), is undone for one round; if the
 * old limit delivers again, the cut stays undone, the floors move up to what calls take now and the
 * tolerance widens by half its base (up to {@link #MAX_TOLERANCE}; the queue allowance grows by
 * that widening x the calls served); each cut that holds narrows it by {@link #LOSS} again.
 * Throughput alone is too noisy to judge a cut by at a steady load below capacity (small batches
 * vary by a quarter from round to round, and the rate does not depend on the limit there), so a cut
 * is suspected only if the calls it removed were being served rather than queued ({@link
 * #servedShare}: Little's law on the work the downstream completes per floor time), and the undo
 * stands only if the calls it adds back are served again (ADR 0018).
 *
 * <p>Failed calls back the limit off only while they follow our concurrency (ADR 0065): a back-off
 * whose next round fails as large a share is undone and that share tolerated (it comes from the
 * inputs: one key whose batches always fail), decaying. That judgement runs at any share short of
 * every call failing (ADR 0184): a fixed half of calls refused whatever the load (one replica of two
 * down) held the limit at 1 when half always backed off; a round in which no call succeeded (the
 * downstream is down) always backs off. Refusals far faster than successes fill such rounds too,
 * before any success started in them returns: that is how storms of refusals above a capacity
 * bring the limit down, and what holds it near 13 with half the calls refused at random and no
 * pool (ADR 0193, not fixed: the rules tried cost other shapes).
 * A round's failed share counts the failures that started no later than its last successful call
 * did (ADR 0175): a round ends on its first completions, where fast refusals would be
 * over-represented. Once failures have backed the limit off to half or less of what it was (an
 * outage), each wave of successes in a row (as many calls as the limit) doubles it back toward
 * that limit (ADR 0019, TCP's slow start after a timeout); a back-off before the doubled limit has
 * held for a round ends the recovery at the limit the doubling came from (ADR 0175). Failures that
 * follow the limit at one level (a rate limit: refused calls free their slots at once, so one call
 * past the rate starts a storm) are told from failures that do not (a share failing at random at
 * any limit) by their level, not by one round (ADR 0181): each limit keeps a tally of its rounds'
 * calls and failures, and a probe into a level whose tally failed at least {@link #LOSS} more than
 * the limit in force, by {@link #FOLLOW_Z} standard errors, stops below it; the hold lasts {@link
 * #PROBE_HOLD} rounds, then one probe looks again, and each time the level still fails the next
 * hold is twice as long, up to {@link #PROBE_HOLD_MAX}, and never longer than {@link
 * #PROBE_HOLD_MAX_NANOS} (ADR 0192: rounds of slow calls at a low limit are long). A round that
 * fails a tenth less than its level's tally starts the tally afresh (a rate limit raised since).
 *
 * <p>Latency this loop added is not the downstream's (ADR 0015): a loop that runs callbacks late
 * (other processes hold the cores, a long task ahead in its queue) delays every completion by its
 * lag. The engine passes the lag its probe last saw with each sample; the sample is judged with
 * that lag taken off (at most half of it, so an overestimate never makes a call look free), and a
 * round whose calls spent at least {@link #LAG_SHARE} of their latency in the loop's lag is not
 * judged at all: no cut, no probe up, no floor moves. The probe's lag need not be a sample's (the
 * probe waited, the call came back on time), so no floor is below the fastest call of its class
 * seen on time, with next to no lag told (ADR 0114): a floor below what any call takes reads every
 * call on time as queued.
 *
 * <p>A stall is not a queue either (ADR 0107). A GC pause, the machine descheduling the process or
 * the downstream pausing holds every call in flight at once, and the probe, posted after the first
 * late completion, waits through none of it: the round's median call reads as queueing, and the
 * cut went to what a stalled downstream seemed to serve (24 -> 3). A queue at the downstream keeps
 * completing calls about once a call time (the calls ahead of a queued call complete while it
 * waits); a stall completes nothing, then everything it held. So a round that would cut, in which
 * at least half the calls were in flight through a stretch of more than {@link #HELD_FLOORS} floor
 * times without any completion, is not judged: no cut, no probe up, no trial judged by its
 * delivered rate (a floor round like it is abandoned). Only once: a round held again right after
 * it is how this downstream answers (calls far slower than their floor, a cache that misses) and
 * is judged as any other.
 *
 * <p>A round holds the calls that came back first, and where calls have very different service
 * times that batch size does not explain (a cache's hits and misses, a partition on a slower disk,
 * the slow node of a replica set) those are the fast ones: in front of a pool of 4, with 90% of
 * calls answered at once, 84% of the rounds held no miss, the median call was a hit on its floor,
 * and the limit stayed at slow start's 64 while the misses queued (ADR 0194). By Little's law the
 * round's own calls keep (their time on the wire / the round's length) of the calls in flight;
 * where that is under {@link #UNSEEN} of the calls beside them, the rest are judged by the slow
 * calls ({@link #SLOW} floors or more) that completed during the round, whenever they started,
 * against a floor of their own (a median of {@link #SLOW_GROUP} of them, from two groups in a row
 * each spread at most {@link #SLOW_SPREAD}-fold: pauses spread widely are not a second service time): the
 * downstream serves the round's own calls and the unseen ones over the slow calls' median ratio
 * (less the tolerance), and the round is judged on that instead of its median. The slow calls must
 * account for {@link #SLOW_EXPLAINED} of the unseen ones (calls that hang until their timeout fail
 * and say nothing of a queue) and be a group apart, few calls between {@link #GAP_FROM} and {@link
 * #SLOW} floors (a heavy tail fills that band, a cache's misses leave it empty); a floor round
 * forgets the slow floors.
 *
 * <p>Latency that rises with the calls in flight is not always a queue (ADR 0149): calls that share
 * the downstream's CPU each take longer as more run, yet together they get more done. Measured
 * against floors learned at a lower concurrency, that latency reads as a queue at every limit, and
 * each cut is too small to be a trial, so the limit sank below what the downstream serves. The law
 * keeps, for the last few limits, the mean over their rounds of what the downstream served at once
 * (calls in flight / mean latency over floor: Little's law, so a FIFO queue's steps do not move
 * it); a cut is not made when those means, and this round, say the downstream served at least
 * {@link #SERVED} of the calls between a lower limit and this one (ADR 0018's test, made on many
 * rounds instead of one, so batch noise cannot fake it). The floors move up to what calls take now
 * instead. The rounds compared must be of the same downstream (ADR 0182): the lower limit had a
 * round among the last {@link #SERVED_ROUNDS} noted, and this round against that latest round
 * alone says so too; a pool that grew while the limit climbed read as served calls, the queue
 * became the floors, and the limit rose to 6x the pool. A FIFO pool beyond its size, or
 * processor sharing beyond its cores, serves the same at every limit, and is cut as before.
 *
 * <p>A downstream that slows gradually (a database that loads up) is not a queue either (ADR 0179).
 * Floors only fall between re-measurements, so each round reads a little more latency over floor
 * at every limit alike; the limit cut a call, the round at the lower limit probed back, each cut a
 * streak of its own, and it walked down to 1 at a pool with no queue. Rounds in a row at limits a
 * call apart see the same downstream and floors, so the drift cancels out of their difference: in
 * a queue, the call a cut removes was waiting and what the downstream serves at once stays; in a
 * drift, it was served and what the downstream seems to serve falls with it. Each judged round
 * that held calls back is paired with the last one (calls in flight at least {@link
 * #SERVED_SPREAD} apart); a round that would cut does not when the last {@link #SERVED_ROUNDS}
 * pairs say the downstream served at least {@link #PAIR_SERVED} of the calls that moved (each
 * pair's part capped at its own calls, so a pool that shrank between two rounds is one pair, not
 * the whole evidence): the floors move up instead. A rebase or a floor round forgets the pairs.
 *
 * <p>A longer path is not a queue either (ADR 0195). When the network's round trip grows (a
 * failover to another region), every call is slower by the same time and the downstream is no
 * busier; by Little's law more calls must be in flight to carry the same load. The first round
 * reads it as a queue and cuts deep, as it must (a pool that lost its connections reads the same in
 * one round), and the trial's round at the cut limit reads no less latency, so ADR 0018 undoes the
 * cut for a round. What tells a path from a queue is those three rounds together: our queue shrinks
 * with our calls, a path does not. When the round at the cut limit, with half the calls in flight
 * or fewer, read latency over floor within {@link #LOSS} of the round at the old limit after it,
 * and that had risen by more than {@link #TOLERANCE}, the rise was a longer path (a smaller move is
 * within the steps a FIFO queue's median takes): the floors move up as before, but the tolerance
 * does not widen (no noise fooled the law), and the limit climbs by doubling toward its old value
 * times the rise (the calls in flight that carry the calls a second it carried before), every other
 * round (the calls a step adds start together and queue behind each other at the downstream, so the
 * round they make is not judged). A cut, a back-off on failures or a round that holds nothing back
 * ends the climb. Judging the path at the cut limit alone, without the round at the old limit, was
 * tried: a pool that shrinks within the round that made the cut reads the same at both (ADR 0153),
 * and the old limit's round, far slower, is what shows it. Before, the limit climbed by an eighth a
 * round: 1.2 s from 29 to 256 at 30 ms calls, while 16,600 inputs were refused.
 *
 * <p>The calls in flight told with each sample are every call on the wire, calls that hang until
 * their timeout included: such a call takes none of the downstream's capacity, yet holds a slot
 * until it ends. Leaving out a call overtaken by later ones and long past the latencies seen was
 * tried and not adopted (ADR 0187): a call that hangs while holding a pool connection ends alike,
 * and leaving those out overloaded the pool.
 *
 * <h2>Invariants</h2>
 * {@code 1 <= limit() <= max}; floors are positive or absent; a pinned limit never moves.
 *
 * <p>Plain state, no clock of its own and no Vert.x: the engine calls it on its loop, passing the
 * time, and tests drive it with made-up samples.
 */
public final class CallLimit {
  /**
   * How far above its floor a round's latency may be before it counts as queueing, where that
   * allows fewer queued calls than the square root of the calls served (below 6.25 of them: small
   * pools, processor sharing on a few cores); see {@link #queueAllowance}.
   */
  static final double TOLERANCE = 0.4;
  /**
   * A class's mean in a round lowers its floor only if the class had this many calls in it: the
   * floor is the lowest mean of many rounds, and the mean of one or two calls of a heavy-tailed
   * downstream is its fastest call, far below the typical one (ADR 0068).
   */
  static final int MIN_CLASS = 8;
  /** Samples in a round at least (and at least the limit). */
  static final int MIN_ROUND = 16;
  /** How often the floors are re-measured at a lowered limit. */
  static final long FLOOR_PERIOD_NANOS = 30_000_000_000L;
  /** The limit during a floor round, as a fraction of the limit before it. */
  static final double FLOOR_ROUND_SHARE = 0.6;
  /** Cuts that brought the calls in flight to this share or less are judged. */
  static final double DEEP_CUT = 0.8;
  /** Rounds in a row whose latency over floor exceeds what our own calls could cause, before the floors rebase. */
  static final int ROUNDS_NOT_OURS = 5;
  /** A cut after which the limit holds calls back and fewer inputs per second arrive than this share less is undone. */
  static final double LOSS = 0.1;
  /**
   * A cut is a trial (judged by throughput) only if it removes at least this share of the limit:
   * a smaller one can cost at most its share of the calls, within the noise of one round's
   * delivered rate (a fifth at small batches, ADR 0018), so judging it undid right cuts on noise
   * and rebased the floors onto a queue (ADR 0020). Twice {@link #LOSS}.
   */
  static final double TRIAL_CUT = 2 * LOSS;
  /**
   * A round in which at least this share of calls failed is judged even when most of its latency
   * was loop lag: the downstream is failing most of what it gets. (Such a round no longer always
   * backs off: only one in which every call failed does, ADR 0184.)
   */
  static final double MOSTLY_FAILING = 0.5;
  /** The tolerance never rises above this: latency 5x its floor is queueing, whatever was learned. */
  static final double MAX_TOLERANCE = 4.0;
  /**
   * A cut is suspected of costing throughput only if at least this share of the calls it removed
   * were served, not queued (and undone only if that share of them is served again when they come
   * back). Below the symmetric midpoint (1/2) because the costs are not symmetric: a call too few
   * leaves part of the downstream idle, a call too many waits a fraction of a call time. On a
   * downstream whose calls share a CPU (15% slower per other call), the 7th call is 49% served and
   * still pays in inputs per second.
   */
  static final double SERVED = 1 / 3.0;
  /** A round whose latency was at least this share loop lag is not judged (ADR 0015). */
  static final double LAG_SHARE = 0.5;
  /**
   * A call whose told lag is at most this share of its class's floor (of its own latency before
   * there is one) came back on time (ADR 0114). Relative to the floor, not to the call: a call that
   * queued long is not on time because its lag is small beside its queue.
   */
  static final double ON_TIME_LAG = 1.0 / 16;
  /**
   * The loop's lag, told with a sample, when the probe has not read any yet (the first calls): no
   * lag is taken off, and the call is not on time (ADR 0114), as it may have waited for the loop
   * as long as any other.
   */
  public static final long LAG_UNKNOWN = -1;
  /**
   * A stretch without any completion longer than this many floor times, with calls in flight
   * through it, is a stall, not a queue (ADR 0107): a queue completes a call at least every call
   * time. Twice, for calls slower than their floor (the floor is the lowest round mean).
   */
  static final double HELD_FLOORS = 2;
  /** Limits whose rounds are remembered for {@link #servedByEvidence}. */
  static final int SERVED_LIMITS = 8;
  /**
   * Pairs of rounds in a row (ADR 0179) say the downstream served the calls that moved between
   * them when at least this share of those calls was served: the majority, not {@link #SERVED}'s
   * third. A pair is two single rounds, not two means of many: rounds a call apart at a FIFO pool
   * twice its size, whose floors were learned on a queue after a cold start, read more than a
   * third of the moved calls as served.
   */
  static final double PAIR_SERVED = 0.5;
  /** Rounds at a limit, at least, before its mean says what the downstream served there. */
  static final int SERVED_ROUNDS = 16;
  /** The mean runs over about this many of a limit's latest rounds. */
  static final int SERVED_MEMORY = 32;
  /** Two limits are compared only if their rounds' mean calls in flight differ by this many calls at least. */
  static final double SERVED_SPREAD = 0.5;
  /**
   * Failures follow the limit at a level (ADR 0181) when its rounds failed a share at least {@link
   * #LOSS} above the rounds at the limit in force, by at least this many standard errors of the
   * difference (counted over their calls, at least {@link #FOLLOW_ROUNDS} rounds each): calls that
   * fail at random with the same share at every limit (30% of them) gave it a few times a minute
   * at 3, the tallies of neighbouring limits being no independent draws; at 5, three times in four
   * runs of 10 s.
   */
  static final double FOLLOW_Z = 5;
  /** Rounds at a level, at least, before its failed share is compared with another's. */
  static final int FOLLOW_ROUNDS = 2;
  /** Limits whose rounds' failures are remembered (ADR 0181). */
  static final int FAIL_LIMITS = 8;
  /** A level's tally of calls and failures is halved once it holds this many rounds. */
  static final int FAIL_MEMORY = 16;
  /**
   * Probes into a level where failures follow the limit are held for this many rounds at first,
   * then twice as many each time a probe into it fails again, up to {@link #PROBE_HOLD_MAX}.
   */
  static final int PROBE_HOLD = 8;
  static final int PROBE_HOLD_MAX = 256;
  /**
   * A hold also ends this long after it began (review BI): 256 rounds of 2 ms calls at a limit of
   * 4, but 41 s of 20 ms calls at a limit of 2, where a rate limit raised meanwhile went unseen.
   */
  static final long PROBE_HOLD_MAX_NANOS = 2_000_000_000L;
  /** A call's latency over floor counts at most this many times the round's median in {@link #meanRatio}. */
  static final double SERVED_CAP = 2;
  /**
   * A round's own calls account for its calls in flight, by Little's law, unless the time they
   * spent on the wire, over the round's length, is less than this share of the calls in flight
   * beside each of them (ADR 0194): then most of what is on the wire is calls the round does not
   * see.
   */
  static final double UNSEEN = 0.25;
  /**
   * Calls in flight the round's own calls leave unaccounted for, at least, before it is judged on
   * the ones it does not see.
   */
  static final double UNSEEN_MIN = 3;
  /** A call that took at least this many times its batch size's floor is slow (ADR 0194). */
  static final double SLOW = 8;
  /**
   * The slow calls completing in the round must account for at least this share of the calls the
   * round's own calls do not (ADR 0194): calls that fail at their timeout do not say how long the
   * served ones wait.
   */
  static final double SLOW_EXPLAINED = 0.5;
  /**
   * The slow calls are a group of their own, apart from the rest, only if the calls between {@link
   * #GAP_FROM} and {@link #SLOW} floors number at most this share of them (ADR 0194): a heavy tail
   * (Pareto, lognormal) fills that band, a cache's misses leave it empty.
   */
  static final double GAP_SHARE = 0.25;
  /** Calls from this many floors up to {@link #SLOW} are between the fast calls and the slow ones. */
  static final double GAP_FROM = 2;
  /**
   * A group of {@link #SLOW_GROUP} slow calls counts toward a slow floor only if its slowest is at
   * most this many times its fastest, and a floor needs two such groups in a row: a second service
   * time (a cache's misses) gives groups that tight whenever nothing queues; pauses spread over a
   * wide range (20 to 300 ms) give one now and then, two in a row almost never, and the lowest
   * median of many such groups would read a queue in every typical one (review BP).
   */
  static final double SLOW_SPREAD = 2;
  /** Slow calls gathered, over as many rounds as it takes, for each median that may lower a slow floor. */
  static final int SLOW_GROUP = 8;
  /** A trial cut: judged by the inputs per second of the round after next. */
  private static final int CUT = -1;
  /** A cut undone for one round, to tell whether the cut or the downstream cost throughput. */
  private static final int UNDONE = -2;

  private static final int CLASSES = 32;

  private final int max;
  private final boolean pinned;
  private int limit;
  private boolean slowStart = true;
  /**
   * The limit held before the failures that backed it off (0: none pending): once calls succeed
   * again, the limit doubles per clean wave back up to it (TCP's ssthresh; ADR 0019).
   */
  private int recoverTo;
  /**
   * The limit a recovery doubling (ADR 0019) came from, until a judged round at the doubled limit
   * shows it held (0: none pending): a back-off on failures before then says the doubling
   * overshot, and the recovery ends at this limit (ADR 0175).
   */
  private int doubledFrom;
  /** Successful calls in a row in the current round (a wave of them doubles a limit recovering from failures). */
  private int cleanRun;

  /** Floor point per batch-size class: its mean batch size and latency in nanos; latency 0 = none yet. */
  private final double[] floorSize = new double[CLASSES];
  private final double[] floorLatency = new double[CLASSES];
  /**
   * Each class's mean in the last round that had at least {@link #MIN_CLASS} of its calls (or the
   * floor it was last given): a floor falls only to the higher of that and the next such mean.
   */
  private final double[] lastClassMean = new double[CLASSES];
  private int roundsNotOurs;
  // Cuts in a row, judged together (see endRound).
  private boolean cutting;
  private boolean settling;
  private int limitBeforeCuts;
  private double ratioAtFirstCut;
  private double inFlightAtFirstCut;

  // The current round.
  // Loop nanos have an arbitrary origin and may wrap: times are only ever compared by difference.
  private boolean started;
  private long roundStart;
  private int samples;
  private int failures;
  /** When each of the round's failed calls started (loop nanos), for {@link #failedShare}. */
  private long[] failedStart = new long[16];
  private boolean heldBack;
  private long inFlightSum;
  private final long[] classSum = new long[CLASSES];
  /**
   * Each class's fastest call seen on time (next to no lag told with it: {@link #ON_TIME_LAG})
   * since the floors were last re-measured, 0 before the first: a round's mean, lag taken off, sets
   * no floor below it (ADR 0114). The lag taken off a sample is the probe's, which need not be the
   * sample's; a call on time says what the downstream takes without any doubt about the loop. It
   * only bounds how far a floor falls, never raises one: the fastest call on time may have queued.
   * The bound is also never above {@link #fastestMeasured}.
   */
  private final long[] onTime = new long[CLASSES];
  /**
   * Each class's fastest successful call as measured, lag included, over the same span as {@link
   * #onTime}, on time or not: a call took at most that. A bound above it outlived the downstream it
   * measured (the downstream got faster while its calls came back late, or the calls on time were
   * slower ones that the lag had not been told for) and would hide a queue of the faster one.
   */
  private final long[] fastestMeasured = new long[CLASSES];
  /** The round's successful samples, for the median latency over floor. */
  private long[] sampleLatency = new long[16];
  private int[] sampleSize = new int[16];
  /** When each of the round's successful samples started and completed (loop nanos), for {@link #heldTogether}. */
  private long[] sampleStart = new long[16];
  private long[] sampleEnd = new long[16];
  /** The last completion seen (any call, any round), and the longest time this round went without one. */
  private boolean anyCompleted;
  private long lastCompletion;
  private long longestGap;
  private long gapFrom;
  /**
   * The last judged round's calls were held up together: a stall is a one-off, so a round held
   * again right after it is this downstream's way of answering (calls that take far longer than
   * their floor, a cache that misses) and is judged as ADR 0012 judges any round.
   */
  private boolean heldBefore;
  private int sampleCount;
  /**
   * Every successful call that completed since the round began, whenever it started (its latency
   * with the lag taken off as a sample's is), for {@link #unseenServed}. The round's own calls are
   * the first of its calls to come back; where some calls take many times what the rest do, they
   * are the fast ones, and the slow ones complete in later rounds (ADR 0194).
   */
  private long[] windowLatency = new long[16];
  private int[] windowSize = new int[16];
  private int windowCount;
  /**
   * Per class, the floor of its slow calls (0: none yet): the lowest median of {@link #SLOW_GROUP}
   * of them, gathered over as many rounds as it takes, that the median before it agrees with (the
   * higher of the two, as ADR 0152 lowers a floor). The last such median, and the slow calls
   * gathered toward the next.
   */
  private final double[] slowFloor = new double[CLASSES];
  private final double[] lastSlowMedian = new double[CLASSES];
  private final double[][] slowGathered = new double[CLASSES][SLOW_GROUP];
  private final int[] slowGatheredCount = new int[CLASSES];
  /** The round's latency as measured and the loop lag seen with it, in nanos. */
  private long rawLatencySum;
  private long lagSum;
  private final long[] classSize = new long[CLASSES];
  private final int[] classCount = new int[CLASSES];

  // Trials: a change of limit that throughput judges (the inputs delivered per second in the next
  // judged round against the round that made the change).
  /** 0: none, {@link #CUT} or {@link #UNDONE}. */
  private int trial;
  private int trialFrom;
  private double trialRate;
  private double rateBeforeCut;
  private double trialRatio;
  private double trialInFlight;
  // What the downstream served at once, per recent limit (see noteServed).
  private final int[] servedLimit = new int[SERVED_LIMITS];
  private final int[] servedCount = new int[SERVED_LIMITS];
  private final long[] servedUsed = new long[SERVED_LIMITS];
  private final double[] servedInFlight = new double[SERVED_LIMITS];
  private final double[] servedAtLimit = new double[SERVED_LIMITS];
  /** Each limit's latest round alone: its calls in flight and what was served of them (ADR 0182). */
  private final double[] servedLastInFlight = new double[SERVED_LIMITS];
  private final double[] servedLast = new double[SERVED_LIMITS];
  private long servedClock;
  // What the downstream served at once between rounds in a row (see notePair; ADR 0179).
  private final double[] pairMoved = new double[SERVED_ROUNDS];
  private final double[] pairServed = new double[SERVED_ROUNDS];
  private int pairNext;
  private int pairCount;
  private double pairPrevInFlight;
  private double pairPrevServed;
  /**
   * How far above its floor the median call may be before it counts as queueing, where that is
   * the smaller queue ({@link #queueAllowance}; above {@link #TOLERANCE} it also widens the square
   * root's allowance): starts at {@link #TOLERANCE}, rises when a cut made on latency cost
   * throughput (that latency is this downstream's normal), falls back when cuts hold.
   */
  private double tolerance = TOLERANCE;
  /**
   * The share of failed calls in a round that says nothing about our concurrency: learned when a
   * back-off on failures did not lower that share (one key whose batches always fail and are
   * retried, a downstream failing a fixed share of calls), decaying by {@link #LOSS} a round.
   */
  private double failuresAllowed;
  // Failures per recent limit, and the probe held below a level where they follow the limit (ADR 0181).
  private final int[] failLimit = new int[FAIL_LIMITS];
  private final double[] failCalls = new double[FAIL_LIMITS];
  private final double[] failFailed = new double[FAIL_LIMITS];
  private final int[] failRounds = new int[FAIL_LIMITS];
  private final long[] failUsed = new long[FAIL_LIMITS];
  private long failClock;
  /** The level probes are held below (0: none), rounds the hold has left, and how long the next one lasts. */
  private int holdBelow;
  private int holdLeft;
  private int holdLength;
  /**
   * Where the limit climbs by doubling after a longer path was found (ADR 0195; 0: no climb): the
   * calls in flight that carry, at the new latency, the calls a second the limit carried before.
   * A cut, a back-off on failures or a round that held nothing back ends the climb.
   */
  private int pathTo;
  /** When the hold in force ends at the latest, whatever rounds it has left ({@link #PROBE_HOLD_MAX_NANOS}). */
  private long holdEnds;
  /** The limit before the last round's back-off on failures (0: that round made none), and the failed share it saw. */
  private int failureCutFrom;
  private double failureShareAtCut;

  // The floor re-measurement.
  private long nextFloorRound;
  private boolean floorRound;
  private int limitBeforeFloorRound;

  // What the last round saw (for metrics).
  private long seenLatencyNanos;
  private long seenFloorNanos;
  private long seenLoopLagNanos;

  /** A learned limit between 1 and {@code max}, starting at 1. */
  public static CallLimit learned(int max) {
    return new CallLimit(max, 1, false);
  }

  /** A limit fixed at {@code value}. */
  public static CallLimit pinned(int value) {
    return new CallLimit(value, value, true);
  }

  private CallLimit(int max, int start, boolean pinned) {
    if (max < 1 || start < 1 || start > max) {
      throw new IllegalArgumentException("limit " + start + " outside [1, " + max + "]");
    }
    this.max = max;
    this.limit = start;
    this.pinned = pinned;
  }

  /** The limit in force: calls beyond it wait. */
  public int limit() {
    return limit;
  }

  public boolean isPinned() {
    return pinned;
  }

  /** Mean latency of the calls in the last completed round, in nanos (0 before the first). */
  public long seenLatencyNanos() {
    return seenLatencyNanos;
  }

  /** Mean floor the last round's calls were compared with, in nanos (0 before the first). */
  public long seenFloorNanos() {
    return seenFloorNanos;
  }

  /** Mean loop lag seen with the samples of the last completed round, in nanos (0 before the first). */
  public long seenLoopLagNanos() {
    return seenLoopLagNanos;
  }

  /** A call completed, on a loop with no lag. */
  public void completed(long now, long latencyNanos, int size, int inFlightAtStart, boolean failed) {
    completed(now, latencyNanos, size, inFlightAtStart, failed, 0);
  }

  /**
   * A call completed.
   *
   * @param now the loop's time, in nanos
   * @param latencyNanos how long the call was on the wire
   * @param size the inputs it carried (at least 1)
   * @param inFlightAtStart calls on the wire just after it started, itself included
   * @param failed it failed or timed out
   * @param loopLagNanos how late the owning loop ran its callbacks lately (its probe's lateness),
   *     or {@link #LAG_UNKNOWN} before the probe has read any
   */
  public void completed(long now, long latencyNanos, int size, int inFlightAtStart, boolean failed,
      long loopLagNanos) {
    if (pinned) {
      return;
    }
    // A loop clock that went backwards mid-call would give a negative latency.
    latencyNanos = Math.max(0, latencyNanos);
    long startedAt = now - latencyNanos;
    if (!started) {
      started = true;
      roundStart = startedAt;
      nextFloorRound = now + FLOOR_PERIOD_NANOS;
    }
    if (now - roundStart < 0) {
      // The loop's clock went backwards (a source that is not monotonic): every call from now on
      // would look as if it started before this round and be ignored until the clock caught up,
      // freezing the limit. The round starts again here, and the floor round's due time moves
      // back with the clock.
      newRound(startedAt);
      if (nextFloorRound - now > FLOOR_PERIOD_NANOS) {
        nextFloorRound = now + FLOOR_PERIOD_NANOS;
      }
    }
    if (anyCompleted && now - roundStart > 0 && now - lastCompletion > longestGap) {
      // Every completion counts here, the calls started before this round included: a gap is a
      // time in which the downstream, as this loop saw it, completed nothing at all.
      longestGap = now - lastCompletion;
      gapFrom = lastCompletion;
    }
    anyCompleted = true;
    lastCompletion = now;
    if (!failed && now - roundStart >= 0) {
      // Any call that completes in the round, for the calls its own do not show (ADR 0194).
      long lagged = Math.max(0, Math.min(loopLagNanos, latencyNanos));
      if (windowCount == windowLatency.length) {
        windowLatency = Arrays.copyOf(windowLatency, 2 * windowCount);
        windowSize = Arrays.copyOf(windowSize, 2 * windowCount);
      }
      windowLatency[windowCount] = Math.max(1, latencyNanos - Math.min(lagged, latencyNanos / 2));
      windowSize[windowCount++] = size;
    }
    if (startedAt - roundStart < 0) {
      // Started under an earlier limit: it says nothing about this one.
      return;
    }
    long lag = Math.max(0, Math.min(loopLagNanos, latencyNanos));
    rawLatencySum += latencyNanos;
    lagSum += lag;
    // Judged without the loop's lag: that time the call was over, waiting for this loop.
    long measured = latencyNanos;
    latencyNanos -= Math.min(lag, latencyNanos / 2);
    samples++;
    inFlightSum += inFlightAtStart;
    heldBack |= inFlightAtStart >= limit;
    if (failed) {
      if (failures == failedStart.length) {
        failedStart = Arrays.copyOf(failedStart, 2 * failures);
      }
      failedStart[failures++] = startedAt;
      cleanRun = 0;
    } else {
      cleanRun++;
      int c = sizeClass(size);
      classSum[c] += Math.max(1, latencyNanos);
      if (loopLagNanos != LAG_UNKNOWN && (lag == 0 || lag <= onTimeLagBound(size, measured))) {
        onTime[c] = onTime[c] == 0 ? Math.max(1, latencyNanos) : Math.min(onTime[c], Math.max(1, latencyNanos));
      }
      fastestMeasured[c] = fastestMeasured[c] == 0 ? Math.max(1, measured) : Math.min(fastestMeasured[c], Math.max(1, measured));
      classSize[c] += size;
      classCount[c]++;
      if (sampleCount == sampleLatency.length) {
        sampleLatency = Arrays.copyOf(sampleLatency, 2 * sampleCount);
        sampleSize = Arrays.copyOf(sampleSize, 2 * sampleCount);
        sampleStart = Arrays.copyOf(sampleStart, 2 * sampleCount);
        sampleEnd = Arrays.copyOf(sampleEnd, 2 * sampleCount);
      }
      sampleLatency[sampleCount] = Math.max(1, latencyNanos);
      sampleStart[sampleCount] = startedAt;
      sampleEnd[sampleCount] = now;
      sampleSize[sampleCount++] = size;
    }
    if (!floorRound && cleanRun >= limit && limit <= recoverTo / 2) {
      // Calls succeed again after failures backed the limit off to half or less of what it was (an
      // outage, not failures that follow our concurrency: those stop a tenth or two below): a wave
      // of successes (as many as the limit, about one call time) doubles it back toward where it
      // was (ADR 0019). The round's earlier failures are behind us; latency is judged again as the
      // rounds go on.
      doubledFrom = limit;
      setLimit(Math.min(recoverTo, 2 * limit));
      if (limit >= recoverTo) {
        recoverTo = 0;
      }
      failureCutFrom = 0;
      newRound(now);
      return;
    }
    if (samples >= roundSize()) {
      endRound(now);
    }
  }

  /**
   * Samples that end a round: one wave (as many as the limit) during slow start, so the limit
   * doubles per call time as TCP's window does per round trip (ADR 0020); otherwise at least
   * {@link #MIN_ROUND}, so that one slow call does not move the round's median. A floor round always
   * takes at least {@link #MIN_ROUND}: its class means become the floors.
   */
  private int roundSize() {
    return slowStart && !floorRound ? limit : Math.max(MIN_ROUND, limit);
  }

  private void endRound(long now) {
    seenLoopLagNanos = lagSum / samples;
    if (rawLatencySum > 0 && lagSum >= LAG_SHARE * rawLatencySum && failedShare() < MOSTLY_FAILING) {
      // Most of the latency was this loop's own lateness (a starved machine): it says nothing
      // about the downstream, so the round is not judged. A floor round is abandoned (its limit
      // must not last as long as the lag does): the limit before it returns, and the floors are
      // re-measured a period later. Only a downstream failing most calls still backs off.
      if (floorRound) {
        floorRound = false;
        setLimit(limitBeforeFloorRound);
        nextFloorRound = now + FLOOR_PERIOD_NANOS;
      }
      newRound(now);
      return;
    }
    if (floorRound && failures == 0 && !heldBefore && heldTogether(medianRatio())) {
      // A floor round whose calls were held up together (ADR 0107) would make a stall the floors
      // for a floor period: it is abandoned as a round of loop lag is.
      floorRound = false;
      setLimit(limitBeforeFloorRound);
      nextFloorRound = now + FLOOR_PERIOD_NANOS;
      newRound(now);
      return;
    }
    if (floorRound) {
      endFloorRound(now);
      return;
    }
    // Inputs per nano the round's calls delivered, by Little's law (calls in flight x inputs per
    // call / latency): what the limit bought, when it held calls back. Counting completions per
    // unit of time instead is off by the calls that end together at a round's edge.
    double rate = deliveredRate();
    // Failures back off the limit only while they follow our concurrency: a back-off that did not
    // lower the failed share was no help (the failures come from the inputs, not the load), so it
    // is undone and that share is tolerated from then on (ADR 0065).
    double failedShare = failedShare();
    noteFailures();
    if (failureCutFrom > 0) {
      int from = failureCutFrom;
      failureCutFrom = 0;
      // Any share short of every call failing (ADR 0184): a fixed share of half or more held the
      // limit at 1 when such rounds always backed off.
      if (failures > 0 && failedShare < 1 && failedShare >= failureShareAtCut) {
        failuresAllowed = Math.max(failuresAllowed, failedShare);
        setLimit(from);
        if (limit >= recoverTo) {
          recoverTo = 0;
        }
        newRound(now);
        return;
      }
    }
    boolean failed = failedTooMany(failedShare);
    if (!failed) {
      // The limit a recovery doubling set held for a round: it is what the downstream takes.
      doubledFrom = 0;
    }
    failuresAllowed *= 1 - LOSS;
    if (settling && !failed) {
      // The round after a cut: its calls queued behind those started before the cut. Not judged.
      settling = false;
      newRound(now);
      return;
    }
    settling = false;
    // Each class's samples are judged at their mean size against the floor curve; a class with no
    // floor yet learns one below, from this round's mean less the queueing the known classes show.
    double floorSum = 0;
    double latencySum = 0;
    int known = 0;
    double[] expected = new double[CLASSES];
    for (int c = 0; c < CLASSES; c++) {
      if (classCount[c] == 0) {
        continue;
      }
      expected[c] = floorAt(classSize[c] / (double) classCount[c]);
      if (expected[c] > 0) {
        floorSum += expected[c] * classCount[c];
        latencySum += classSum[c];
        known += classCount[c];
      }
    }
    double queueDelay = known == 0 ? 0 : Math.max(0, (latencySum - floorSum) / known);
    for (int c = 0; c < CLASSES; c++) {
      if (classCount[c] == 0) {
        continue;
      }
      double size = classSize[c] / (double) classCount[c];
      if (floorLatency[c] == 0) {
        // Not below the curve the other classes draw (0 where it has no value: one class known,
        // this one beyond it), and the queueing taken off never takes it below the floor of a
        // smaller batch: the queueing they show is an average, and a class whose few calls queued
        // less than that would otherwise learn a floor below what its batch size costs, which the
        // curve (never rising toward smaller batches) would give the smaller ones too (ADR 0020,
        // 0151). Its calls themselves may be faster than that floor: then the smaller batch's
        // floor was learned slow (a cold start's first call) and comes down with it.
        double own = classFloor(c);
        double smaller = Math.min(own, floorBelow(size));
        setFloor(c, size, Math.max(Math.max(1, own - queueDelay), Math.max(expected[c], smaller)));
        lastClassMean[c] = own;
      } else if (classCount[c] >= MIN_CLASS) {
        // Lowered only as far as this round and the class's last such round agree (ADR 0152): a
        // class mean of heavy-tailed calls varies by half from round to round, and the lowest of
        // hundreds of them read every typical call as queued. Two lucky rounds in a row are rare;
        // a downstream that really got faster shows it in both. Not during slow start: its
        // floors come down from a cold start's first calls while the limit doubles every round,
        // and a round late there is a limit twice too high, which the floor round then learns.
        double mean = classFloor(c);
        double agreed = slowStart ? mean : Math.max(mean, lastClassMean[c]);
        lastClassMean[c] = mean;
        if (agreed < expected[c]) {
          setFloor(c, size, agreed);
        }
      }
    }
    if (known > 0) {
      seenLatencyNanos = (long) (latencySum / known);
      seenFloorNanos = (long) (floorSum / known);
    } else if (samples > failures) {
      // The first round: what it saw is the floor.
      long all = 0;
      for (int c = 0; c < CLASSES; c++) {
        all += classSum[c];
      }
      seenLatencyNanos = all / (samples - failures);
      seenFloorNanos = seenLatencyNanos;
    }
    double meanInFlight = inFlightSum / (double) samples;
    // The median call's latency over its floor: queueing at the downstream delays every call
    // alike, while a stall of this loop or a slow outlier delays a few; the median sees the first.
    double ratio = known > 0 ? medianRatio() : 1;
    // Where the round's own calls cannot account for the calls in flight, the ones it does not see
    // are slow calls that complete in later rounds (a cache's misses behind its hits): what the
    // downstream serves is read on those (ADR 0194), and the median stands for the rest.
    double unseenServed = failed || known == 0 ? 0 : unseenServed(now, meanInFlight);
    if (unseenServed > 0) {
      ratio = meanInFlight / unseenServed;
    }
    // Little's law again: the downstream serves calls in flight / ratio of them at once; the rest
    // wait in its queue. That queue, counted in calls, is judged against the allowance (ADR 0076).
    double servedAtOnce = meanInFlight / ratio;
    double allowed = queueAllowance(servedAtOnce);
    boolean inflated = meanInFlight - servedAtOnce > allowed;
    // Calls queued behind our own calls wait at most for the calls ahead of them: latency over
    // floor beyond the calls in flight (even with one connection) is not our queue (a loop that
    // answers late, a slower downstream). Such rounds never cut the limit; lasting, they rebase.
    boolean queueing = inflated && ratio <= meanInFlight * (1 + tolerance);
    roundsNotOurs = inflated && !queueing && !failed ? roundsNotOurs + 1 : 0;
    // Calls held up together by a stall (this loop's, the process's, the downstream's) read as a
    // queue of our calls. Such a round is not judged (ADR 0107): no cut, no probe up (its latency is
    // no evidence of room either), and no trial judged by its delivered rate, which the stall
    // lowered as it raised the latency; a pending trial waits for the next round. Only a one-off:
    // held again in the next round, it is how this downstream answers, and judged as any round.
    boolean heldNow = queueing && !failed && heldTogether(ratio);
    boolean held = heldNow && !heldBefore;
    heldBefore = heldNow;
    if (held) {
      newRound(now);
      return;
    }
    if (roundsNotOurs >= ROUNDS_NOT_OURS) {
      roundsNotOurs = 0;
      cutting = false;
      rebaseFloors(ratio);
      newRound(now);
      return;
    }
    if (trial != 0 && !failed) {
      int kind = trial;
      trial = 0;
      // Were the calls the change removed (or, undone, added back) served or queued? By Little's
      // law the downstream completes (calls in flight / latency over floor) floor-times of work
      // per unit of time: calls it serves move that with them, calls it queues do not. Only a
      // cut of calls it mostly served can have cost the inputs per second; a lower rate after a
      // cut of queued calls is the rounds' noise (small batches vary) or a lighter load.
      boolean served = servedShare(meanInFlight, ratio, trialInFlight, trialRatio) >= SERVED;
      if (kind == CUT && heldBack && rate < (1 - LOSS) * trialRate && ratio <= trialRatio && served) {
        // The cut held calls back and fewer inputs per second came through, while latency over
        // floor did not rise (it does when the downstream itself slows down: a pool that shrank).
        // The cut probably cost them: the downstream was serving those calls, not queueing them
        // (a batch that grew, a busy machine, a cache that misses). The old limit comes back for
        // one round to make sure (the load itself may have changed).
        trial = UNDONE;
        int cutTo = limit;
        setLimit(trialFrom);
        trialFrom = cutTo;
        rateBeforeCut = trialRate;
        trialRate = rate;
        trialInFlight = meanInFlight;
        trialRatio = ratio;
        settling = true;
        newRound(now);
        return;
      }
      if (kind == UNDONE && (rate <= (rateBeforeCut + trialRate) / 2 || !served)) {
        // No better with the old limit (the downstream slowed down), or the old limit's extra
        // calls mostly queued: the cut stands. A round at the old limit that queued worse than
        // where the streak began is its new worst point (ADR 0153): the streak's first round may
        // have straddled a pool that shrank, and judged against it the next round at the cut
        // limit read as a cut that brought nothing.
        if (cutting && queueing && ratio > ratioAtFirstCut) {
          ratioAtFirstCut = ratio;
          inFlightAtFirstCut = meanInFlight;
        }
        setLimit(trialFrom);
        settling = true;
        newRound(now);
        return;
      }
      if (kind == UNDONE) {
        // The old limit delivers most of what it did before the cut: the cut cost throughput.
        // The latency that made it is this downstream's normal at this load, not a queue: the
        // floors move up to what calls take now, and the tolerance widens (noise this large
        // must not read as queueing again).
        // Nothing else is judged on this round: its queue was read against the floors just
        // replaced, and cutting on it would make again the cut just found to cost throughput.
        cutting = false;
        rebaseFloors(ratio);
        if (longerPath(trialInFlight, trialRatio, meanInFlight, ratio)) {
          // Latency over floor was the same at the cut limit, half the calls or fewer, as here
          // again: not noise that read as a queue, nor a pool that shrank (this round would read
          // far more), but a longer path (ADR 0195). The tolerance stays; the limit climbs.
          climbTo(ratio);
        } else {
          tolerance = Math.min(MAX_TOLERANCE, tolerance + TOLERANCE / 2);
        }
        newRound(now);
        return;
      } else {
        // The cut held (it cost nothing, or the downstream slowed): latency is trusted a little more.
        tolerance = Math.max(TOLERANCE, tolerance * (1 - LOSS));
      }
    }
    if (cutting && known > 0 && !failed) {
      // Cuts in a row, judged together: our own queue shrinks with the calls in flight (Little's
      // law), so once they are well down, at least half of that drop must show in latency over floor.
      double mustFallTo = 0.5 + 0.5 * Math.min(1, meanInFlight / inFlightAtFirstCut);
      boolean deep = meanInFlight <= DEEP_CUT * inFlightAtFirstCut && limitBeforeCuts - limit >= 2;
      if (!queueing) {
        cutting = false;
      } else if (deep && ratio >= mustFallTo * ratioAtFirstCut && ratio <= ratioAtFirstCut
          && meanInFlight / ratio <= 0.5 * inFlightAtFirstCut / ratioAtFirstCut) {
        // (Latency above where the streak began is a new worst point, judged afresh below: the
        // round that began the streak may have straddled a pool that shrank, its median part old
        // pool and part new, and judged against it the first round wholly at the smaller pool read
        // as a cut that brought nothing; ADR 0153.)
        // ... and what the downstream seems to serve at once (calls in flight x floor / latency)
        // fell with our own limit: an estimate that follows the limit down is no estimate.
        // The cuts did not bring latency down: it was not our queue (a slower downstream, a busy
        // machine). The floors move up to what calls take now, and the limit comes back.
        cutting = false;
        trial = 0;
        rebaseFloors(ratio);
        setLimit(limitBeforeCuts);
        newRound(now);
        return;
      }
    }
    // What the downstream served at once on the mean latency (Little's law), not the median (see
    // meanRatio): remembered per limit, and the least a cut leaves (ADR 0150).
    double servedOnMean = servedAtOnce;
    if (!failed && known > 0 && (heldBack || queueing)) {
      servedOnMean = unseenServed > 0 ? servedAtOnce : meanInFlight / meanRatio(ratio);
      if (heldBack) {
        noteServed(meanInFlight, servedOnMean);
        notePair(meanInFlight, servedOnMean);
      }
      if (queueing && (servedByEvidence(meanInFlight, servedOnMean) || servedByPairs())) {
        // The calls this cut would remove were served: the latency is this downstream's at this
        // concurrency, not a queue. The floors move up to it (forgetting the rounds read against
        // the old ones), and the limit stays.
        cutting = false;
        trial = 0;
        rebaseFloors(ratio);
        newRound(now);
        return;
      }
    }
    if (failed) {
      backOffOnFailures(failedShare);
    } else if (queueing) {
      // What the downstream serves at once, plus the queue it may keep. The median says whether
      // there is a queue; how many calls are served is Little's law on the mean, where that is more
      // (ADR 0150): a queue that drains in waves puts the median on the step of the calls that
      // waited a whole call time, and a cut to it went below the pool.
      double served = Math.max(servedAtOnce, servedOnMean);
      int target = (int) Math.ceil(served + queueAllowance(served));
      if (!cutting || ratio > ratioAtFirstCut) {
        // A streak is judged from its worst point: a queue that grew meanwhile (a pool that
        // shrank) starts it afresh.
        cutting = true;
        limitBeforeCuts = limit;
        ratioAtFirstCut = ratio;
        inFlightAtFirstCut = meanInFlight;
      }
      // A cut of at least TRIAL_CUT of the limit is a trial, judged by the inputs per second of
      // the round after next; a smaller one is judged with its streak (above).
      trialFrom = limit;
      trialRate = rate;
      trialRatio = ratio;
      trialInFlight = meanInFlight;
      setLimit(Math.min(limit - 1, target));
      pathTo = 0;
      trial = trialFrom - limit >= TRIAL_CUT * trialFrom ? CUT : 0;
      if (slowStart) {
        // Slow start learned its floors from waves of 1, 2, 4 ... calls whose batches were small
        // (no queue had formed in the ferry yet): the classes of the load it found were first met
        // in rounds that queued. The floors are re-measured as soon as this cut has settled, not a
        // floor period later (ADR 0020).
        nextFloorRound = now;
      }
      slowStart = false;
      recoverTo = 0;
      settling = true;
    } else if (heldBack) {
      // A longer path found (ADR 0195): the limit doubles toward what carries the calls a second
      // of before, as slow start does.
      int from = limit;
      boolean climb = pathTo > limit;
      int to = slowStart ? 2 * limit : climb ? Math.min(pathTo, 2 * limit) : limit + Math.max(1, limit / 8);
      setLimit(probeTo(to, now));
      if (limit >= pathTo) {
        pathTo = 0;
      }
      if (climb && limit > from) {
        // The calls a step adds start together and queue at the downstream behind each other (a
        // burst of ours, not a load it cannot serve): the round they make is not judged.
        settling = true;
      }
    } else {
      // The limit holds nothing back: the load is carried, and a climb has nothing to climb to.
      pathTo = 0;
    }
    if (heldBack && now - nextFloorRound >= 0 && !settling) {
      trial = 0;
      floorRound = true;
      limitBeforeFloorRound = limit;
      setLimit((int) (limit * FLOOR_ROUND_SHARE));
    }
    newRound(now);
  }

  /** A round at a lowered limit: its class means become the floors, then the limit is restored. */
  private void endFloorRound(long now) {
    forgetPairs();
    if (failures == 0) {
      Arrays.fill(floorLatency, 0);
      for (int c = 0; c < CLASSES; c++) {
        if (classCount[c] > 0) {
          double mean = classFloor(c);
          setFloor(c, classSize[c] / (double) classCount[c], mean);
          lastClassMean[c] = mean;
        }
      }
      // The bound starts again with the floors: one freak fast call (a cached answer) does not
      // hold it down for good.
      Arrays.fill(onTime, 0);
      Arrays.fill(fastestMeasured, 0);
      forgetSlowFloors();
    }
    floorRound = false;
    setLimit(limitBeforeFloorRound);
    nextFloorRound = now + FLOOR_PERIOD_NANOS;
    // Failures in a floor round count as in any round: the limit it restores backs off as the
    // last round's would have (a floor round must not be a window in which failures are forgotten).
    double failedShare = failedShare();
    if (failedTooMany(failedShare)) {
      backOffOnFailures(failedShare);
    }
    newRound(now);
  }

  /** The round's failed share says the downstream fails more than its tolerated share (ADR 0065). */
  private boolean failedTooMany(double failedShare) {
    // Only a round in which no call succeeded always backs off (the downstream is down); a
    // share short of that is judged against the tolerated one, as ADR 0065 judges any (ADR 0184).
    return failedShare > 0 && (failedShare >= 1 || failedShare > failuresAllowed * (1 + TOLERANCE));
  }

  /**
   * The share of the round's calls that failed, over the calls that started no later than the last
   * of its successful calls started (all of them when none succeeded; ADR 0175). A round ends on
   * the first calls to complete among those started in it, so calls that fail fast (a refusal)
   * are over-represented in it: against 2 ms successes, 30% of calls refused in 0.1 ms read as
   * 45-50% of a round, and half of the rounds backed off as "mostly failing". Every call that
   * started before the last successful one did is either in the round or still on the wire, the
   * same for failures as for successes (up to how their latencies vary).
   */
  private double failedShare() {
    if (failures == 0) {
      return 0;
    }
    if (sampleCount == 0) {
      return 1;
    }
    int counted = countedFailures();
    return counted / (double) (sampleCount + counted);
  }

  /** The round's failed calls that started no later than its last successful call did (all of them when none succeeded). */
  private int countedFailures() {
    if (sampleCount == 0) {
      return failures;
    }
    long cutoff = sampleStart[0];
    for (int i = 1; i < sampleCount; i++) {
      if (sampleStart[i] - cutoff > 0) {
        cutoff = sampleStart[i];
      }
    }
    int counted = 0;
    for (int i = 0; i < failures; i++) {
      if (failedStart[i] - cutoff <= 0) {
        counted++;
      }
    }
    return counted;
  }

  /**
   * Adds the round's calls and failures (counted as {@link #failedShare} counts them) to its
   * limit's tally (ADR 0181). A round that failed at least {@link #LOSS} less than its limit's
   * tally starts it afresh: what failed there before does not now (a rate limit that was raised).
   */
  private void noteFailures() {
    int counted = countedFailures();
    double calls = sampleCount + counted;
    if (calls == 0) {
      return;
    }
    int slot = -1;
    for (int i = 0; i < FAIL_LIMITS; i++) {
      if (failRounds[i] > 0 && failLimit[i] == limit) {
        slot = i;
        break;
      }
    }
    if (slot >= 0 && counted / calls <= failFailed[slot] / failCalls[slot] - LOSS) {
      failRounds[slot] = 0;
    }
    if (slot < 0 || failRounds[slot] == 0) {
      if (slot < 0) {
        // The least recently used slot (an empty one first).
        slot = 0;
        for (int i = 1; i < FAIL_LIMITS; i++) {
          if (failUsed[i] < failUsed[slot]) {
            slot = i;
          }
        }
      }
      failLimit[slot] = limit;
      failRounds[slot] = 0;
      failCalls[slot] = 0;
      failFailed[slot] = 0;
    }
    if (failRounds[slot] == FAIL_MEMORY) {
      failRounds[slot] /= 2;
      failCalls[slot] /= 2;
      failFailed[slot] /= 2;
    }
    failRounds[slot]++;
    failCalls[slot] += calls;
    failFailed[slot] += counted;
    failUsed[slot] = ++failClock;
  }

  /**
   * Where a probe up from this limit to {@code to} may go (ADR 0181): below the lowest level in
   * between whose rounds failed more than the rounds at this limit, repeatably and beyond noise
   * ({@link #failuresFollow}), for a hold that doubles each time a probe into that level fails
   * again. Failures that do not follow the limit (a share failing at random at every limit) leave
   * the probe alone: the level above fails as much as this one.
   */
  private int probeTo(int to, long now) {
    int here = failSlot(limit);
    if (here < 0) {
      return to;
    }
    int level = 0;
    for (int i = 0; i < FAIL_LIMITS; i++) {
      if (failRounds[i] > 0 && failLimit[i] > limit && failLimit[i] <= to
          && (level == 0 || failLimit[i] < level) && failuresFollow(i, here)) {
        level = failLimit[i];
      }
    }
    if (level == 0) {
      return to;
    }
    if (level != holdBelow) {
      holdBelow = level;
      holdLength = PROBE_HOLD;
      holdLeft = PROBE_HOLD;
      holdEnds = now + PROBE_HOLD_MAX_NANOS;
    }
    if (holdLeft > 0 && now - holdEnds < 0) {
      holdLeft--;
      return Math.max(limit, level - 1);
    }
    // The hold is over: one probe into the level, to see whether it still fails (a rate limit
    // raised since); if it does, the next hold is twice as long.
    holdLength = Math.min(PROBE_HOLD_MAX, 2 * holdLength);
    holdLeft = holdLength;
    holdEnds = now + PROBE_HOLD_MAX_NANOS;
    return to;
  }

  private int failSlot(int level) {
    for (int i = 0; i < FAIL_LIMITS; i++) {
      if (failRounds[i] > 0 && failLimit[i] == level) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Slot {@code hi}'s rounds failed a share at least {@link #LOSS} above slot {@code lo}'s, by
   * {@link #FOLLOW_Z} standard errors of the difference at least, with {@link #FOLLOW_ROUNDS}
   * rounds each: the failures follow the limit, not chance.
   */
  private boolean failuresFollow(int hi, int lo) {
    if (failRounds[hi] < FOLLOW_ROUNDS || failRounds[lo] < FOLLOW_ROUNDS) {
      return false;
    }
    double shareHi = failFailed[hi] / failCalls[hi];
    double shareLo = failFailed[lo] / failCalls[lo];
    if (shareHi - shareLo < LOSS) {
      return false;
    }
    double pooled = (failFailed[hi] + failFailed[lo]) / (failCalls[hi] + failCalls[lo]);
    double error = Math.sqrt(pooled * (1 - pooled) * (1 / failCalls[hi] + 1 / failCalls[lo]));
    return shareHi - shareLo >= FOLLOW_Z * error;
  }

  /** Backs off by a tenth, remembering from where and at what failed share (ADR 0065 judges it next round). */
  private void backOffOnFailures(double failedShare) {
    trial = 0;
    pathTo = 0;
    failureCutFrom = limit;
    failureShareAtCut = failedShare;
    if (doubledFrom > 0) {
      // The wave of successes that doubled this limit did not last (ADR 0175): the doubling went
      // past what the downstream takes now (a rate limit that refuses calls beyond it; refused
      // calls come back at once, so their slots keep the refusals coming), and doubling again from
      // a tenth below would repeat it for good. The limit returns to where the doubling came from
      // and the recovery ends there, as TCP halves its threshold on a loss in slow start; the next
      // back-off, if the failures go on, starts a new one from that limit.
      setLimit(doubledFrom);
      doubledFrom = 0;
      recoverTo = 0;
    } else {
      recoverTo = Math.max(recoverTo, limit);
      setLimit(limit - Math.max(1, limit / 10));
    }
    slowStart = false;
  }

  /**
   * The calls that may wait at the downstream while it serves {@code served} at once: the square
   * root of {@code served}, or {@link #TOLERANCE} of it where that is less (below 6.25 calls), so
   * the allowed queue grows far slower than the pool (ADR 0076: 4 calls at 16, 8 at 64; a share
   * of latency let 40% of the pool wait, where batches cannot grow). What trials learned widens
   * it in proportion to the calls served, as latency noise is proportional to latency: by
   * (tolerance - {@link #TOLERANCE}) x served.
   */
  double queueAllowance(double served) {
    double learned = (tolerance - TOLERANCE) * served;
    return Math.min(tolerance * served, Math.sqrt(served) + learned);
  }

  /**
   * Latency over floor that rose (by more than {@link #TOLERANCE}) stayed the same, within {@link
   * #LOSS}, between a round at {@code highInFlight} calls and one at {@code lowInFlight}, half as
   * many or fewer (ADR 0195): the downstream served every call between, and latency that rose
   * without a queue is a longer path. Our own queue would have shrunk with the calls at least by
   * half; a smaller move is within what a round's median wanders on a queue whose latencies come in
   * steps of a call time (two limits a fifth apart at a pool whose calls are one in ten 20 times
   * slower read the same median). Latency at its floor in both rounds rose for no path: the cut
   * came from noise, which ADR 0018's undo answers by widening the tolerance.
   */
  static boolean longerPath(double lowInFlight, double lowRatio, double highInFlight, double highRatio) {
    return lowInFlight > 0 && highInFlight >= 2 * lowInFlight && highRatio >= 1 + TOLERANCE
        && lowRatio >= (1 - LOSS) * highRatio;
  }

  /**
   * After a longer path, the limit climbs by doubling toward the limit in force times {@code ratio}
   * (the new latency over the old floor): by Little's law, the calls in flight that carry the calls
   * a second the limit in force carried before (ADR 0195).
   */
  private void climbTo(double ratio) {
    pathTo = (int) Math.min(max, Math.ceil(limit * ratio));
  }

  /**
   * Of the calls in flight added or removed since a reference round, the share the downstream
   * served rather than queued: its work completed per unit of time (calls in flight over latency
   * over floor, by Little's law) moves in proportion to the calls it serves and not at all with
   * calls that wait in its queue. 1: all served (no queue), 0: all queued; 0 when the calls in
   * flight did not change (no evidence).
   */
  static double servedShare(double inFlight, double ratio, double refInFlight, double refRatio) {
    double calls = inFlight / refInFlight - 1;
    if (refInFlight <= 0 || Math.abs(calls) < 1e-9 || ratio <= 0 || refRatio <= 0) {
      return 0;
    }
    return (inFlight / ratio / (refInFlight / refRatio) - 1) / calls;
  }

  /**
   * What the downstream served at once in a round whose own calls do not account for its calls in
   * flight; 0 where they do, or where the slow calls completing beside them do not say (ADR 0194).
   *
   * <p>By Little's law the round's own calls kept (their time on the wire / the round's length) of
   * its calls in flight; a round ends on the first of its calls to come back, so where some calls
   * take many times what the rest do (a cache's misses behind its hits, a partition on a slower
   * disk, the slow node of a replica set) it holds the fast ones, and the median call, fast, reads
   * no queue however long the slow ones wait. The calls in flight beside the round's own, less the
   * ones those account for, are the slow ones: they are judged by the slow calls that completed
   * during the round, whenever they started ({@link #SLOW} floors or more), against their own
   * floor. The downstream serves the round's own calls and the slow ones over their median ratio.
   * Those slow calls must account for at least {@link #SLOW_EXPLAINED} of the calls unaccounted for
   * (calls that hang until their timeout fail, and say nothing of a queue) and be a group apart
   * ({@link #GAP_SHARE}: a heavy tail is not two groups), and a slow median within the tolerance of
   * its floor counts as no queue: the floor is a median of eight calls (varying misses read 1.3 to
   * 2 with no queue without it).
   */
  private double unseenServed(long now, double meanInFlight) {
    if (sampleCount == 0 || now - roundStart <= 0) {
      return 0;
    }
    double span = now - roundStart;
    double own = 0;
    for (int i = 0; i < sampleCount; i++) {
      own += sampleLatency[i];
    }
    double seen = own / span;
    // Calls in flight beside each of the round's calls, itself left out.
    double beside = meanInFlight - 1;
    double[] slow = new double[windowCount];
    int[] slowClass = new int[windowCount];
    int n = 0;
    double slowTime = 0;
    int between = 0;
    for (int i = 0; i < windowCount; i++) {
      double floor = floorAt(windowSize[i]);
      if (floor > 0 && windowLatency[i] >= SLOW * floor) {
        slowTime += windowLatency[i];
        slow[n] = windowLatency[i];
        slowClass[n++] = sizeClass(windowSize[i]);
      } else if (floor > 0 && windowLatency[i] >= GAP_FROM * floor) {
        between++;
      }
    }
    learnSlowFloors(slow, slowClass, n);
    double unseen = beside - seen;
    if (unseen < UNSEEN_MIN || seen >= UNSEEN * beside || slowTime / span < SLOW_EXPLAINED * unseen
        || between > GAP_SHARE * n) {
      return 0;
    }
    double[] ratios = new double[n];
    int k = 0;
    for (int i = 0; i < n; i++) {
      if (slowFloor[slowClass[i]] > 0) {
        ratios[k++] = slow[i] / slowFloor[slowClass[i]];
      }
    }
    if (k < 2) {
      return 0;
    }
    Arrays.sort(ratios, 0, k);
    double median = k % 2 == 1 ? ratios[k / 2] : (ratios[k / 2 - 1] + ratios[k / 2]) / 2;
    double slowRatio = Math.max(1, median / (1 + tolerance));
    return Math.min(meanInFlight, 1 + seen + unseen / slowRatio);
  }

  /**
   * Gathers the round's slow calls per class, and lowers a class's slow floor where two medians of
   * them agree (ADR 0194).
   */
  private void learnSlowFloors(double[] slow, int[] slowClass, int n) {
    for (int i = 0; i < n; i++) {
      int c = slowClass[i];
      slowGathered[c][slowGatheredCount[c]++] = slow[i];
      if (slowGatheredCount[c] == SLOW_GROUP) {
        slowGatheredCount[c] = 0;
        double[] sorted = slowGathered[c].clone();
        Arrays.sort(sorted);
        if (sorted[SLOW_GROUP - 1] > SLOW_SPREAD * sorted[0]) {
          // Spread too wide to be one service time (pauses that hit a few calls, not a second
          // group of calls): the lowest median of many such groups drifts far below a typical
          // one (review BP). The next group starts the agreement anew.
          lastSlowMedian[c] = 0;
          continue;
        }
        double median = (sorted[SLOW_GROUP / 2 - 1] + sorted[SLOW_GROUP / 2]) / 2;
        // Two tight groups in a row, the higher of their medians (as ADR 0152 lowers a floor).
        double agreed = lastSlowMedian[c] == 0 ? 0 : Math.max(median, lastSlowMedian[c]);
        lastSlowMedian[c] = median;
        if (agreed > 0 && (slowFloor[c] == 0 || agreed < slowFloor[c])) {
          slowFloor[c] = agreed;
        }
      }
    }
  }

  /** Forgets the slow calls' floors when the floors are re-measured (a floor round). */
  private void forgetSlowFloors() {
    Arrays.fill(slowFloor, 0);
    Arrays.fill(lastSlowMedian, 0);
    Arrays.fill(slowGatheredCount, 0);
  }

  /** Inputs per nano: mean calls in flight x mean inputs per call / mean latency, over the round's successful calls. */
  private double deliveredRate() {
    if (sampleCount == 0) {
      return 0;
    }
    double inputs = 0;
    double latency = 0;
    for (int i = 0; i < sampleCount; i++) {
      inputs += sampleSize[i];
      latency += sampleLatency[i];
    }
    return inFlightSum / (double) samples * inputs / latency;
  }

  /**
   * The round's latency rose because its calls were held up together (ADR 0107): its median call
   * is over floor by more than the queue allowed, yet at least half of its calls were in flight
   * through one stretch of more than {@link #HELD_FLOORS} floor times in which no call completed.
   * A queue at the downstream does not do that: it keeps completing calls at its serving rate,
   * each within about a floor time (the calls ahead of a queued call complete while it waits). A
   * stall of this loop or of the whole process (a GC pause, the machine descheduling it), or of the
   * downstream itself, does: nothing completes, then everything it held.
   */
  private boolean heldTogether(double ratio) {
    if (sampleCount == 0 || longestGap <= 0) {
      return false;
    }
    double meanInFlight = inFlightSum / (double) samples;
    double served = meanInFlight / ratio;
    if (meanInFlight - served <= queueAllowance(served) || ratio > meanInFlight * (1 + tolerance)) {
      return false;
    }
    double floorSum = 0;
    int known = 0;
    for (int i = 0; i < sampleCount; i++) {
      double floor = floorAt(sampleSize[i]);
      if (floor > 0) {
        floorSum += floor;
        known++;
      }
    }
    if (known == 0 || longestGap <= HELD_FLOORS * floorSum / known) {
      return false;
    }
    long gapTo = gapFrom + longestGap;
    int held = 0;
    for (int i = 0; i < sampleCount; i++) {
      // In flight through the whole gap (differences only: loop nanos may wrap).
      if (gapFrom - sampleStart[i] >= 0 && sampleEnd[i] - gapTo >= 0) {
        held++;
      }
    }
    return 2 * held >= sampleCount;
  }

  /**
   * The mean over the round's samples (those with a floor) of latency / floor, each counted at most
   * {@link #SERVED_CAP} times the round's {@code median}; 1 with none. For what the downstream
   * served at once, compared between limits (ADR 0149): by Little's law the calls in flight over
   * the mean latency are what it completes, so a FIFO pool beyond its size reads the same at every
   * limit. The median does not: a queue's latencies come in steps of a call time, and the step the
   * median falls on moves with the limit (at a pool of 6 with steady calls, limits 8 and 9 read 5.73
   * and 5.98 served over hundreds of rounds, a third of the added call). The cap keeps one call of a
   * heavy tail from deciding a round.
   */
  private double meanRatio(double median) {
    double cap = SERVED_CAP * median;
    double sum = 0;
    int n = 0;
    for (int i = 0; i < sampleCount; i++) {
      double floor = floorAt(sampleSize[i]);
      if (floor > 0) {
        sum += Math.min(cap, sampleLatency[i] / floor);
        n++;
      }
    }
    return n == 0 ? 1 : sum / n;
  }

  /** The median over the round's samples (those with a floor) of latency / floor; 1 with none. */
  private double medianRatio() {
    double[] ratios = new double[sampleCount];
    int n = 0;
    for (int i = 0; i < sampleCount; i++) {
      double floor = floorAt(sampleSize[i]);
      if (floor > 0) {
        ratios[n++] = sampleLatency[i] / floor;
      }
    }
    if (n == 0) {
      return 1;
    }
    Arrays.sort(ratios, 0, n);
    return n % 2 == 1 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
  }

  /**
   * Remembers what the downstream served at once against the round before (both held calls back):
   * the calls in flight moved by {@code d}, what was served by {@code s} (ADR 0179).
   */
  private void notePair(double inFlight, double served) {
    if (pairPrevInFlight > 0 && Math.abs(inFlight - pairPrevInFlight) >= SERVED_SPREAD) {
      double d = inFlight - pairPrevInFlight;
      double s = served - pairPrevServed;
      if (d < 0) {
        d = -d;
        s = -s;
      }
      // A pair that straddled a change of the downstream (a pool that shrank between the two
      // rounds) counts as at most its own calls, served or queued: one pair never outweighs others.
      s = Math.max(-d, Math.min(d, s));
      pairMoved[pairNext] = d;
      pairServed[pairNext] = s;
      pairNext = (pairNext + 1) % SERVED_ROUNDS;
      pairCount = Math.min(SERVED_ROUNDS, pairCount + 1);
    }
    pairPrevInFlight = inFlight;
    pairPrevServed = served;
  }

  /**
   * The last {@link #SERVED_ROUNDS} pairs of rounds in a row whose calls in flight differed say the
   * downstream served at least {@link #PAIR_SERVED} of the calls that moved (ADR 0179).
   */
  private boolean servedByPairs() {
    if (pairCount < SERVED_ROUNDS) {
      return false;
    }
    double moved = 0;
    double served = 0;
    for (int i = 0; i < SERVED_ROUNDS; i++) {
      moved += pairMoved[i];
      served += pairServed[i];
    }
    return served >= PAIR_SERVED * moved;
  }

  private void forgetPairs() {
    pairCount = 0;
    pairPrevInFlight = 0;
  }

  /** Scales every floor by {@code ratio}, then takes this round's class means as the floors of its classes. */
  private void rebaseFloors(double ratio) {
    forgetPairs();
    for (int c = 0; c < CLASSES; c++) {
      floorLatency[c] *= ratio;
    }
    for (int c = 0; c < CLASSES; c++) {
      if (classCount[c] > 0) {
        setFloor(c, classSize[c] / (double) classCount[c], classFloor(c));
      }
    }
  }

  /**
   * What this round says class {@code c}'s floor is: its mean latency, the loop's lag taken off, but
   * not below the fastest call of the class seen on time, nor that bound above its fastest call as
   * measured (ADR 0114).
   */
  private double classFloor(int c) {
    double bound = onTime[c] == 0 ? 0 : Math.min(onTime[c], fastestMeasured[c]);
    return Math.max(1, Math.max(classSum[c] / (double) classCount[c], bound));
  }

  /**
   * The most lag a call of {@code size} may be told and still be on time ({@link #ON_TIME_LAG} of
   * its floor, of its {@code measured} latency without one). Only asked when some lag was told: the
   * floor curve is a walk over the classes, on the loop, for every call that completes.
   */
  private double onTimeLagBound(int size, long measured) {
    double floor = floorAt(size);
    return (floor > 0 ? floor : measured) * ON_TIME_LAG;
  }

  private void setFloor(int c, double size, double latency) {
    if (floorLatency[c] != latency || floorSize[c] != size) {
      // What the rounds said the downstream served was read against the old floors.
      forgetServed();
    }
    floorSize[c] = size;
    floorLatency[c] = latency;
  }

  /**
   * Records a judged round that held calls back: its mean calls in flight and what the downstream
   * served of them at once (calls in flight / mean latency over floor, {@link #meanRatio}), for its
   * limit.
   */
  private void noteServed(double inFlight, double served) {
    int slot = -1;
    for (int i = 0; i < SERVED_LIMITS; i++) {
      if (servedCount[i] > 0 && servedLimit[i] == limit) {
        slot = i;
        break;
      }
    }
    if (slot < 0) {
      // The least recently used slot (an empty one first).
      slot = 0;
      for (int i = 1; i < SERVED_LIMITS; i++) {
        if (servedUsed[i] < servedUsed[slot]) {
          slot = i;
        }
      }
      servedLimit[slot] = limit;
      servedCount[slot] = 0;
      servedInFlight[slot] = 0;
      servedAtLimit[slot] = 0;
    }
    int n = Math.min(++servedCount[slot], SERVED_MEMORY);
    servedInFlight[slot] += (inFlight - servedInFlight[slot]) / n;
    servedAtLimit[slot] += (served - servedAtLimit[slot]) / n;
    servedLastInFlight[slot] = inFlight;
    servedLast[slot] = served;
    servedUsed[slot] = ++servedClock;
  }

  private void forgetServed() {
    Arrays.fill(servedCount, 0);
    Arrays.fill(servedUsed, 0);
  }

  /**
   * The rounds at this limit and at a lower one, {@link #SERVED_ROUNDS} each at least, say that
   * the calls between them were served, not queued: what the downstream served at once grew by at
   * least {@link #SERVED} of the calls in flight added (ADR 0018's test, on the means of many
   * rounds instead of one round against one), and this round, against the lower limit's mean, says
   * so too (a pool that just shrank is not judged by rounds from before). Then the latency that
   * reads as a queue is what this downstream takes at this concurrency, as when its calls share a
   * CPU (ADR 0149).
   */
  private boolean servedByEvidence(double inFlightNow, double servedNow) {
    int here = -1;
    for (int i = 0; i < SERVED_LIMITS; i++) {
      if (servedCount[i] >= SERVED_ROUNDS && servedLimit[i] == limit) {
        here = i;
      }
    }
    if (here < 0) {
      return false;
    }
    int below = -1;
    for (int i = 0; i < SERVED_LIMITS; i++) {
      if (servedCount[i] >= SERVED_ROUNDS && servedLimit[i] < limit
          && servedClock - servedUsed[i] <= SERVED_ROUNDS
          && spread(servedInFlight[here], servedInFlight[i])
          && (below < 0 || servedLimit[i] > servedLimit[below])) {
        below = i;
      }
    }
    if (below < 0) {
      return false;
    }
    double refInFlight = servedInFlight[below];
    double refRatio = refInFlight / servedAtLimit[below];
    return servedShare(servedInFlight[here], servedInFlight[here] / servedAtLimit[here], refInFlight, refRatio) >= SERVED
        && spread(inFlightNow, refInFlight)
        && servedShare(inFlightNow, inFlightNow / servedNow, refInFlight, refRatio) >= SERVED
        && spread(inFlightNow, servedLastInFlight[below])
        && servedShare(inFlightNow, inFlightNow / servedNow, servedLastInFlight[below],
            servedLastInFlight[below] / servedLast[below]) >= SERVED;
  }

  /**
   * Calls in flight far enough apart to compare what was served at each: by {@link #SERVED_SPREAD}
   * calls and by {@link #LOSS} of the larger (a share of a share: two limits a call apart at a pool
   * of 64 differ by less than the rounds' noise in what they served).
   */
  private static boolean spread(double inFlight, double lower) {
    return inFlight - lower >= Math.max(SERVED_SPREAD, LOSS * inFlight);
  }

  private void newRound(long now) {
    roundStart = now;
    samples = 0;
    failures = 0;
    cleanRun = 0;
    heldBack = false;
    inFlightSum = 0;
    rawLatencySum = 0;
    lagSum = 0;
    Arrays.fill(classSum, 0);
    sampleCount = 0;
    windowCount = 0;
    Arrays.fill(classSize, 0);
    Arrays.fill(classCount, 0);
    longestGap = 0;
  }

  /**
   * The floor curve at batch size {@code size}: piecewise linear through the classes' floor points
   * (mean size, floor latency); beyond the largest point, extended with the slope of the two largest
   * (never falling); below the smallest, the smallest point's latency. 0 when unknown: no point
   * yet, or a size beyond the one point there is.
   */
  double floorAt(double size) {
    int lo = -1;
    int hi = -1;
    int below = -1;
    for (int c = 0; c < CLASSES; c++) {
      if (floorLatency[c] == 0) {
        continue;
      }
      if (floorSize[c] <= size) {
        below = lo;
        lo = c;
      } else if (hi < 0) {
        hi = c;
      }
    }
    if (lo >= 0 && hi >= 0) {
      double span = floorSize[hi] - floorSize[lo];
      double slope = span <= 0 ? 0 : Math.max(0, (floorLatency[hi] - floorLatency[lo]) / span);
      return Math.min(floorLatency[hi], floorLatency[lo] + slope * (size - floorSize[lo]));
    }
    if (hi >= 0) {
      return floorLatency[hi];
    }
    if (lo >= 0 && (size <= floorSize[lo] || below >= 0)) {
      double slope = below < 0 ? 0 : Math.max(0,
          (floorLatency[lo] - floorLatency[below]) / Math.max(1e-9, floorSize[lo] - floorSize[below]));
      return floorLatency[lo] + slope * (size - floorSize[lo]);
    }
    return 0;
  }

  /** The highest floor among the classes whose batches are no bigger than {@code size}; 0 with none. */
  private double floorBelow(double size) {
    double highest = 0;
    for (int c = 0; c < CLASSES; c++) {
      if (floorLatency[c] > 0 && floorSize[c] <= size) {
        highest = Math.max(highest, floorLatency[c]);
      }
    }
    return highest;
  }

  private void setLimit(int value) {
    limit = Math.max(1, Math.min(max, value));
  }

  static int sizeClass(int size) {
    return 31 - Integer.numberOfLeadingZeros(Math.max(1, size));
  }

  /** A floor re-measurement round is running (the limit lowered for it); for tests. */
  boolean inFloorRound() {
    return floorRound;
  }

  /** The floor learned for batches of {@code size}, in nanos (0 = unknown); for tests. */
  long floorNanos(int size) {
    return (long) floorAt(size);
  }
}
