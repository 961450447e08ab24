/*
 * REMIT's sequencer protocol as a SPIN model: runs of one reference workflow, a store with a
 * conditional append, processes killed at any statement and restarted, k concurrent resumers in
 * separate processes, two forks of one checkpoint, and an effect sink.
 *
 * Semantics modelled from docs/core-api.md (phases, transitions, admission) and
 * docs/log-format.md (record kinds). Records are abstract (kind, node, arg): no bytes, no CRC.
 *
 * Reference workflow (node kinds in brackets; routing is static in this model):
 *     A [pure] -> E1 [effect] -> I [interrupt] -> E2 [effect, gated by I] -> B [pure] -> end
 * State is a small integer; the state schema accepts state < LIMIT; the interrupt's value schema
 * accepts 1..3. B doubles the state: resume value 1 completes the run; value 2 makes B produce an
 * invalid state, which (as in the shell) is rejected with a typed error and never persisted: the
 * run stays at its last valid checkpoint; value 3 makes B's code throw a TerminalFailure, which
 * records RUN_FAILED. Resumers of run 0 offer 1, 3, 0 (invalid: refused, never claimed), 1, 2
 * (the first K of them); the resumers of the forked runs offer 2.
 *
 * Effects go through the invocation fence (docs/guide.md, "Concurrent sequencers"): a handler is
 * called only by the process whose conditional append of an EFFECT_ATTEMPT committed. The effect
 * node's first step appends EFFECT_INTENT and EFFECT_ATTEMPT(1) in one conditional append and goes
 * straight on to the handler; an attempt without an outcome is taken over (attempt n + 1) by its
 * own instance after a restart (stable instance ids) or by anyone once its lease expired; a thrown
 * handler appends EFFECT_RELEASED. Time is a Clock process: the lease of an attempt nobody is
 * executing always expires eventually (liveness); the lease of an attempt whose owner is still
 * executing it expires at most SLOW times (a slow handler, a stalled store, clock skew).
 *
 * Properties are ghost flags set where a violation is observed; FAIL() also asserts, so the
 * assertion run (no never claim) reports the first violation, and each LTL claim `[] !bad_x`
 * checks one property by itself (build with -DFLAGS_ONLY, run pan -a -N name). Liveness is the
 * claim `live` (pan -a -f: weak fairness).
 *
 * Bounds (override with spin -DNAME=value): K resumers, SEQS sequencers on run 0, CRASHES kills,
 * FORKS (0/1), TRAVEL (0/1), THROWS handler calls that throw an ordinary error, SLOW leases that
 * expire while their owner still holds the attempt, STABLE_IDS (1: a restarted process keeps its
 * instance id; 0: it gets a new one and must wait for the lease). MUTANT selects a broken variant
 * (canaries, see README.md):
 *   1 the claim is not a conditional append
 *   2 recovery does not check for a durable effect completion before re-running the handler
 *   3 fork appends its FORKED record to the source as well as to the new run
 *   4 the sequencer persists a node's state without validating it
 *   5 no invocation fence: a sequencer that finds an attempt without an outcome calls the handler
 *     for it without claiming an attempt of its own (also -DNO_FENCE)
 */

#ifndef K
#define K 2
#endif
#ifndef SEQS
#define SEQS 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef FORKS
#define FORKS 1
#endif
#ifndef TRAVEL
#define TRAVEL 1
#endif
#ifndef THROWS
#define THROWS 0
#endif
#ifndef SLOW
#define SLOW 0
#endif
#ifndef STABLE_IDS
#define STABLE_IDS 1
#endif
#ifdef NO_FENCE
#undef MUTANT
#define MUTANT 5
#endif
#ifndef MUTANT
#define MUTANT 0
#endif

/* Longest log: 15 records (+1 FORKED in a forked run), one more attempt per kill or slow lease,
   a release and an attempt per thrown handler. */
#define MAXLEN (16 + CRASHES + SLOW + 2 * THROWS)
#define NRUNS 3            /* run 0 is the source; runs 1 and 2 are forks of one checkpoint */
#define LIMIT 10           /* state schema: valid iff state < LIMIT */
#define IID 1              /* the interrupt id node I parks on */
#define NOBODY 255

/* Record kinds (docs/log-format.md). */
#define RUN_STARTED      1
#define NODE_COMPLETED   2
#define EFFECT_INTENT    3
#define EFFECT_DONE      4
#define INTERRUPT_PARKED 5
#define RESUME_CLAIMED   6
#define FORKED           7
#define RUN_COMPLETED    8
#define RUN_FAILED       9
#define EFFECT_ATTEMPT   10   /* node; arg = ATT_ARG(attempt, owner instance) (the key is the intent's) */
#define EFFECT_RELEASED  11   /* node; arg = attempt */
#define ATT_ARG(a, o)    ((a) * 16 + (o))
#define ATT_NUM(x)       ((x) / 16)
#define ATT_OWNER(x)     ((x) % 16)
#define IS_FENCE(k)      ((k) == EFFECT_ATTEMPT || (k) == EFFECT_RELEASED)

/* Nodes of the reference workflow. */
#define NA  0
#define NE1 1
#define NI  2
#define NE2 3
#define NB  4
#define IS_PURE(n)      ((n) == NA || (n) == NB)
#define IS_EFFECT(n)    ((n) == NE1 || (n) == NE2)
#define IS_INTERRUPT(n) ((n) == NI)
#define STATE_VALID(s)  ((s) < LIMIT)
#define VALUE_VALID(v)  ((v) >= 1 && (v) <= 3)
/* Idempotency key of an effect: (run id from the log, node). 3 runs x 2 effect nodes. */
#define KEY(who, n)     ((who) * 2 + ((n) == NE2))

/* Recovery phases (docs/core-api.md); PH_ERROR = the log does not recover. */
#define PH_EMPTY     0
#define PH_AT        1
#define PH_INTENT    2
#define PH_DONE      3
#define PH_PARKED    4
#define PH_CLAIMED   5
#define PH_ENDED     6
#define PH_COMPLETED 7
#define PH_FAILED    8
#define PH_ERROR     9
#define PH_ATTEMPTED 10   /* attempt pat (owner pown) of the effect at pn has no outcome */
#define PH_RELEASED  11   /* attempt pat was given up (EFFECT_RELEASED) */

/* What a sequencer does next (ACT_NONE: read the log and decide). */
#define ACT_NONE    0
#define ACT_STOP    1
#define ACT_APPEND  2
#define ACT_INVOKE  3    /* call the handler of the attempt at aseq */
#define ACT_WAIT    4    /* parked */
#define ACT_REJECT  5    /* the node's new state failed the schema: write nothing, raise an error */
#define ACT_BEGIN   6    /* EFFECT_INTENT + EFFECT_ATTEMPT(1) in one conditional append, then invoke */
#define ACT_CLAIM   7    /* EFFECT_ATTEMPT(nat) alone (INVOKE_EFFECT, or a takeover), then invoke */
#define ACT_AWAIT   8    /* another instance's attempt is in flight: EffectInFlightError, retry later */
#define ACT_OUTCOME 9    /* append the attempt's outcome: EFFECT_DONE, or EFFECT_RELEASED if it threw */

/* Admission verdicts (docs/core-api.md reasons; 0 = accept). */
#define ACCEPT            0
#define ALREADY_CONSUMED  1
#define NOT_PARKED        2
#define UNKNOWN_INTERRUPT 3
#define NOT_A_CHECKPOINT  4
#define BEYOND_HEAD       5
#define IMPLICIT_FORK     6
#define LOG_INVALID       7
#define INVALID_VALUE     10   /* the shell's schema refusal, before admission */

#define NKILL (SEQS + K + 2 * FORKS)   /* killable processes; slot NKILL is never killed */
#if NKILL > 7
#error "instance ids are NKILL slots and (STABLE_IDS=0) their restarted ids slot+8: at most 7 slots"
#endif

typedef Rec { byte kind; byte node; byte arg };
typedef Log { Rec r[MAXLEN]; byte cnt };

Log store[NRUNS];
byte forkpt[NRUNS];        /* ghost: the checkpoint a forked run was copied from (NOBODY: none) */
bool hasparked[NRUNS];     /* ghost: the run's log holds INTERRUPT_PARKED */
bool rejected[NRUNS];      /* ghost: a sequencer of the run raised the state-schema error */
byte invoked[6];           /* effect sink: raw handler invocations per key */
bool applied[6];           /* effect sink: effects applied per key (the sink deduplicates by key) */
byte served[NRUNS];        /* resumers whose claim committed, per run */
byte active0;              /* ghost: processes of run 0 (sequencers, resumers) not yet finished */
byte crashes_left = CRASHES;
bool kill[NKILL + 1];
byte throws_left = THROWS;
byte slow_left = SLOW;

/* The fence's ghosts, per run, about the run's latest attempt: the process slot executing it
   (NOBODY: none: it was abandoned, or has its outcome), whether that process has called the
   handler, whether its lease has expired (the clock), and its idempotency key. */
byte holder[NRUNS];
bool called[NRUNS];
bool expired[NRUNS];
byte hkey[NRUNS];
/* The bound of docs/guide.md, per key: raw invocations <= 1 + crashes inside the window (after
   the handler was called, before the outcome was durable) + attempts given up (EFFECT_RELEASED
   committed) + leases that expired while their owner held the attempt (allow_held: from the
   attempt's commit to its outcome, the guide's wording since 2026-12-01) or, as the guide worded
   it before, "while their handler was still running" (allow_docs: only after the handler was
   called). */
byte allow_held[6];
byte allow_docs[6];

/* One flag per property; each is set where a violation is observed. */
bool bad_prefix;           /* 1 prefix continuation */
bool bad_effect;           /* 2 effect exactly-once */
bool bad_fork;             /* 3 fork determinism and source preservation */
bool bad_valid;            /* 4 checkpoint validity */
bool bad_consume;          /* 5 consume-once */
bool bad_determinism;      /* 6 recovery determinism (and: every reachable log recovers) */
bool bad_forkintent;       /* fork-intent obligation */
bool late_invocation;      /* the strong reading: a handler called while a completion of its key is
                              durable anywhere, or while the caller's attempt is not the latest
                              record of its log (another process's attempt is durable after it) */
bool bad_bound;            /* an invocation without its own durable attempt, more invocations than
                              the log records attempts, or more than allow_held */
bool docs_bound;           /* more invocations than allow_docs (flag only: see the SLOW finding) */

/* FLAGS_ONLY (the LTL runs): only set the flag, so each claim checks its own property. */
#ifdef FLAGS_ONLY
#define FAIL(flag) flag = 1
#else
#define FAIL(flag) flag = 1; assert(!flag)
#endif
/* The strong reading is asserted unless a live owner's lease may expire (SLOW > 0): the guide
   counts that case in the bound, and the claim no_late_invocation then shows its trail. */
#if SLOW == 0
#define FAIL_LATE FAIL(late_invocation)
#else
#define FAIL_LATE late_invocation = 1
#endif

#define TERMINAL(x) (store[x].cnt == 0 || \
    store[x].r[store[x].cnt - 1].kind == RUN_COMPLETED || store[x].r[store[x].cnt - 1].kind == RUN_FAILED)
/* Settled: ended, or stopped at a node whose state the schema rejects (the shell's
   StateInvalidError: nothing durable changes, the next attempt is rejected the same way). */
#define SETTLED(x) (TERMINAL(x) || rejected[x])

/* Run 0 is driven from the start; forked runs once every process of run 0 has finished, run 2
   after run 1 (see Sequencer). */
#define MAY_DRIVE(x) ((x) == 0 || (active0 == 0 && ((x) == 1 || SETTLED(1))))

ltl prefix_continuation { [] !bad_prefix }
ltl effect_exactly_once { [] !bad_effect }
ltl fork_determinism    { [] !bad_fork }
ltl checkpoint_validity { [] !bad_valid }
ltl consume_once        { [] !bad_consume }
ltl recovery_determinism { [] !bad_determinism }
ltl fork_intent         { [] !bad_forkintent }
ltl no_late_invocation  { [] !late_invocation }
ltl invocation_bound    { [] !bad_bound }
ltl docs_invocation_bound { [] !docs_bound }
/* Liveness: once crashes stop (finite budget), every run ends completed or failed, or is
   stopped by the state-schema error (parked runs are resumed: every parked run has a resumer). */
ltl live                { <> [] (SETTLED(0) && SETTLED(1) && SETTLED(2)) }

/* ------------------------------------------------------------------------------------------ */
/* Recovery: a fold over the run's records (docs/core-api.md, "Transitions"). Writes the      */
/* caller's locals ph, pn, pa, pat, pown, st, rid, clm, prk; uses i, rk_, rn_, ra_ as scratch  */
/* and zeroes them, so no scratch value survives into the stored state.                       */
/* ------------------------------------------------------------------------------------------ */
inline recover(who) {
  ph = PH_EMPTY; pn = 0; pa = 0; pat = 0; pown = 0; st = 0; rid = 0; clm = 0; prk = 0; i = 0;
  do
  :: i >= store[who].cnt || ph == PH_ERROR -> break
  :: else ->
     rk_ = store[who].r[i].kind; rn_ = store[who].r[i].node; ra_ = store[who].r[i].arg;
     if
     :: ph == PH_COMPLETED || ph == PH_FAILED -> ph = PH_ERROR   /* nothing follows a terminal record */
     :: else ->
        if
        :: rk_ == RUN_STARTED ->
           if :: i == 0 -> ph = PH_AT; pn = NA; st = ra_; rid = 0 :: else -> ph = PH_ERROR fi
        :: rk_ == NODE_COMPLETED ->
           if
           :: (ph == PH_AT && pn == rn_ && IS_PURE(rn_)) || ((ph == PH_DONE || ph == PH_CLAIMED) && pn == rn_) ->
              st = ra_; pa = 0;
              if :: rn_ == NB -> ph = PH_ENDED; pn = 0 :: else -> ph = PH_AT; pn = rn_ + 1 fi
           :: else -> ph = PH_ERROR
           fi
        :: rk_ == EFFECT_INTENT ->
           if :: ph == PH_AT && pn == rn_ && IS_EFFECT(rn_) -> ph = PH_INTENT; pa = ra_ :: else -> ph = PH_ERROR fi
        :: rk_ == EFFECT_ATTEMPT ->   /* attempt 1 after the intent, a + 1 after attempt a or its release */
           if
           :: pn == rn_ && ((ph == PH_INTENT && ATT_NUM(ra_) == 1) ||
                            ((ph == PH_ATTEMPTED || ph == PH_RELEASED) && ATT_NUM(ra_) == pat + 1)) ->
              ph = PH_ATTEMPTED; pat = ATT_NUM(ra_); pown = ATT_OWNER(ra_)
           :: else -> ph = PH_ERROR
           fi
        :: rk_ == EFFECT_RELEASED ->  /* the latest attempt, once */
           if :: ph == PH_ATTEMPTED && pn == rn_ && pat == ra_ -> ph = PH_RELEASED :: else -> ph = PH_ERROR fi
        :: rk_ == EFFECT_DONE ->      /* the fence: no completion without a claimed attempt (format 2) */
           if :: ph == PH_ATTEMPTED && pn == rn_ && pa == ra_ -> ph = PH_DONE :: else -> ph = PH_ERROR fi
        :: rk_ == INTERRUPT_PARKED ->
           if :: ph == PH_AT && pn == rn_ && IS_INTERRUPT(rn_) && !prk -> ph = PH_PARKED; pa = ra_; prk = 1
              :: else -> ph = PH_ERROR fi
        :: rk_ == RESUME_CLAIMED ->   /* node field = interrupt id, arg = value */
           if :: ph == PH_PARKED && pa == rn_ -> ph = PH_CLAIMED; pa = ra_; clm = 1 :: else -> ph = PH_ERROR fi
        :: rk_ == FORKED ->           /* node field = source seq, arg = new run id */
           if
           :: i > 0 && rn_ == i - 1 &&
              (store[who].r[i - 1].kind == RUN_STARTED || store[who].r[i - 1].kind == NODE_COMPLETED) -> rid = ra_
           :: else -> ph = PH_ERROR
           fi
        :: rk_ == RUN_COMPLETED ->
           if :: ph == PH_ENDED -> ph = PH_COMPLETED :: else -> ph = PH_ERROR fi
        :: rk_ == RUN_FAILED ->
           if :: ph != PH_EMPTY -> ph = PH_FAILED :: else -> ph = PH_ERROR fi
        :: else -> ph = PH_ERROR
        fi
     fi;
     i++
  od;
  i = 0; rk_ = 0; rn_ = 0; ra_ = 0
}

/* The next record the sequencer appends, from the recovered phase (docs/core-api.md, next
   action) and, for an attempt without an outcome, the shell's takeover rule (its own instance id,
   the lease's expiry by the clock). Sets act, rk, rn, ra (and nat, aseq for the fence). */
inline decide() {
  rk = 0; rn = 0; ra = 0; nat = 0; aseq = 0;
  if
  :: ph == PH_ERROR -> FAIL(bad_determinism); act = ACT_STOP     /* a reachable log must recover */
  :: ph == PH_EMPTY || ph == PH_COMPLETED || ph == PH_FAILED -> act = ACT_STOP
  :: ph == PH_AT && IS_PURE(pn) ->
     act = ACT_APPEND;
     if
     :: pn == NB && st == 6 -> rk = RUN_FAILED; rn = pn; ra = 0   /* B's code throws TerminalFailure */
     :: else ->
        if :: pn == NA -> st = st + 1 :: else -> st = st * 2 fi;
#if MUTANT == 4
        rk = NODE_COMPLETED; rn = pn; ra = st
#else
        if :: STATE_VALID(st) -> rk = NODE_COMPLETED; rn = pn; ra = st
           :: else -> act = ACT_REJECT                  /* nothing is written; the error names B */
        fi
#endif
     fi
  /* BEGIN_EFFECT: the intent and attempt 1 in one append, then straight into the handler */
  :: ph == PH_AT && IS_EFFECT(pn) -> act = ACT_BEGIN; rk = EFFECT_INTENT; rn = pn; ra = rid; nat = 1
  :: ph == PH_AT && IS_INTERRUPT(pn) -> act = ACT_APPEND; rk = INTERRUPT_PARKED; rn = pn; ra = IID
  /* INVOKE_EFFECT: a format-1 intent (never written by this model) or a released attempt */
  :: ph == PH_INTENT -> act = ACT_CLAIM; rn = pn; ra = pa; nat = 1
  :: ph == PH_RELEASED -> act = ACT_CLAIM; rn = pn; ra = pa; nat = pat + 1
  /* AWAIT_ATTEMPT: the takeover rule */
  :: ph == PH_ATTEMPTED && (pown == inst || expired[who]) -> act = ACT_CLAIM; rn = pn; ra = pa; nat = pat + 1
  :: ph == PH_ATTEMPTED && pown != inst && !expired[who] ->
#if MUTANT == 5
     act = ACT_INVOKE; rk = EFFECT_DONE; rn = pn; ra = pa; nat = pat; aseq = store[who].cnt - 1
#else
     act = ACT_AWAIT                   /* EffectInFlightError: nothing written, nothing called */
#endif
  :: ph == PH_DONE ->
#if MUTANT == 2
     act = ACT_INVOKE; rk = EFFECT_DONE; rn = pn; ra = rid; aseq = store[who].cnt - 1
#else
     act = ACT_APPEND; rk = NODE_COMPLETED; rn = pn; ra = st + 1   /* finish from the recorded result */
#endif
  :: ph == PH_PARKED -> act = ACT_WAIT
  :: ph == PH_CLAIMED ->
     act = ACT_APPEND; st = st + pa;
     if :: STATE_VALID(st) -> rk = NODE_COMPLETED; rn = NI; ra = st
        :: else -> act = ACT_REJECT
     fi
  :: ph == PH_ENDED -> act = ACT_APPEND; rk = RUN_COMPLETED
  fi
}

#define CLEAR_VIEW ph = 0; pn = 0; pa = 0; pat = 0; pown = 0; st = 0; rid = 0; clm = 0; prk = 0

/* ------------------------------------------------------------------------------------------ */
/* The uninterrupted run, written as a table independent of decide(): record q of run R with  */
/* claimed value v. Sets ek, en, ea (ek = 0: nothing may be at q).                             */
/* ------------------------------------------------------------------------------------------ */
inline reference(q, R, v) {
  ek = 0; en = 0; ea = 0;
  if
  :: q == 0  -> ek = RUN_STARTED;    en = NA;  ea = 0
  :: q == 1  -> ek = NODE_COMPLETED; en = NA;  ea = 1
  :: q == 2  -> ek = EFFECT_INTENT;  en = NE1; ea = R
  :: q == 3  -> ek = EFFECT_DONE;    en = NE1; ea = R
  :: q == 4  -> ek = NODE_COMPLETED; en = NE1; ea = 2
  :: q == 5  -> ek = INTERRUPT_PARKED; en = NI; ea = IID
  :: q == 6  -> ek = RESUME_CLAIMED; en = IID; ea = v
  :: q == 7  -> ek = NODE_COMPLETED; en = NI;  ea = 2 + v
  :: q == 8  -> ek = EFFECT_INTENT;  en = NE2; ea = R
  :: q == 9  -> ek = EFFECT_DONE;    en = NE2; ea = R
  :: q == 10 -> ek = NODE_COMPLETED; en = NE2; ea = 3 + v
  :: q == 11 && v == 3 -> ek = RUN_FAILED; en = NB; ea = 0        /* TerminalFailure in B */
  :: q == 11 && v != 3 && STATE_VALID(6 + 2 * v) -> ek = NODE_COMPLETED; en = NB; ea = 6 + 2 * v
  :: q == 12 && v != 3 && STATE_VALID(6 + 2 * v) -> ek = RUN_COMPLETED
  /* v == 2: B's state is invalid; nothing may ever be appended at 11 */
  :: else -> skip
  fi
}

/* Prefix continuation: the record appended at position p of `run` must be the uninterrupted
   run's record there, given this run's fork point and claimed value. The fence's records
   (EFFECT_ATTEMPT, EFFECT_RELEASED: how many depends on crashes, leases and throws) are not part
   of the uninterrupted run: a record is compared at its position among the other records (q),
   and a fence record is checked by recovery's rules (every later read recovers the log). */
inline check_reference(who, p, k, n, a) {
  v = 0; j = 0; q = p;
  do
  :: j < p -> if :: store[who].r[j].kind == RESUME_CLAIMED -> v = store[who].r[j].arg :: else fi;
              if :: IS_FENCE(store[who].r[j].kind) -> q-- :: else fi; j++
  :: else -> break
  od;
  if :: k == RESUME_CLAIMED -> v = a :: else fi;       /* the claim is an input: any valid value */
  if
  :: IS_FENCE(k) -> ek = k; en = n; ea = a
  :: !IS_FENCE(k) && (forkpt[who] == NOBODY || p <= forkpt[who]) -> reference(q, 0, v)
  :: !IS_FENCE(k) && forkpt[who] != NOBODY && p == forkpt[who] + 1 -> ek = FORKED; en = forkpt[who]; ea = who
  :: !IS_FENCE(k) && forkpt[who] != NOBODY && p > forkpt[who] + 1 -> reference(q - 1, who, v)
  fi;
  if :: ek != k || en != n || ea != a -> FAIL(bad_prefix) :: else fi;
  j = 0; v = 0; q = 0; ek = 0; en = 0; ea = 0
}

/* The store's one write for a run: append iff the run's next seq is `expect` (atomic). */
inline conditional_append(who, expect, k, n, a, ok) {
  if
  :: store[who].cnt == expect ->
     assert(expect < MAXLEN);
     store[who].r[expect].kind = k; store[who].r[expect].node = n; store[who].r[expect].arg = a;
     store[who].cnt++; ok = 1;
     if :: k == INTERRUPT_PARKED -> hasparked[who] = 1 :: else fi;
     if :: k == NODE_COMPLETED && !STATE_VALID(a) -> FAIL(bad_valid) :: else fi;
     if :: k == RESUME_CLAIMED && !VALUE_VALID(a) -> FAIL(bad_valid) :: else fi;
     if
     :: k == RESUME_CLAIMED ->            /* consume-once: no second claim in one log */
        j = 0;
        do
        :: j < expect -> if :: store[who].r[j].kind == RESUME_CLAIMED -> FAIL(bad_consume) :: else fi; j++
        :: else -> break
        od;
        j = 0
     :: else
     fi;
     check_reference(who, expect, k, n, a)
  :: else -> ok = 0
  fi
}

/* Effect exactly-once. Called for the attempt at aseq of run `who`, effect node n, key R, by the
   process with instance id inst; `threw`: this call throws an ordinary error (the effect is not
   applied). Checks, in this order:
   - bad_effect, the decision: the log the caller read (up to its attempt) holds no completion;
   - late_invocation, the strong reading: no completion of the key is durable anywhere, and the
     caller's own attempt is the latest record of its run (no other process's attempt after it);
   - bad_bound: the attempt at aseq is the caller's own; invocations of the key do not exceed the
     attempts its run's log records, nor 1 + crashes in the window + releases + leases expired
     while held (allow_held); docs_bound: nor the guide's former wording of the last term (allow_docs).
   The sink applies each key once and counts raw invocations. */
inline invoke_effect(who, R, n, threw) {
  j = 0;
  do
  :: j <= aseq ->
     if
     :: store[who].r[j].kind == EFFECT_DONE && store[who].r[j].node == n && store[who].r[j].arg == R ->
        FAIL(bad_effect)
     :: else
     fi;
     j++
  :: else -> break
  od;
  j = 0;
  do
  :: j < NRUNS * MAXLEN ->
     if
     :: j % MAXLEN < store[j / MAXLEN].cnt && store[j / MAXLEN].r[j % MAXLEN].kind == EFFECT_DONE &&
        store[j / MAXLEN].r[j % MAXLEN].node == n && store[j / MAXLEN].r[j % MAXLEN].arg == R -> FAIL_LATE
     :: else
     fi;
     j++
  :: else -> break
  od;
  if :: store[who].cnt != aseq + 1 -> FAIL_LATE :: else fi;
  if
  :: store[who].r[aseq].kind != EFFECT_ATTEMPT || store[who].r[aseq].node != n ||
     ATT_OWNER(store[who].r[aseq].arg) != inst -> FAIL(bad_bound)
  :: else
  fi;
  if :: invoked[KEY(R, n)] < 255 -> invoked[KEY(R, n)]++ :: else fi;
  printf("TRAIL run %d: process %d (instance %d) calls the handler of node %d for the attempt at seq %d (log length %d; raw calls of key %d: %d)\n",
         who, me, inst, n, aseq, store[who].cnt, KEY(R, n), invoked[KEY(R, n)]);
  if :: !threw -> applied[KEY(R, n)] = 1 :: else fi;
  if :: holder[who] == me -> called[who] = 1 :: else fi;
  j = 0; q = 0;
  do
  :: j < store[who].cnt ->
     if :: store[who].r[j].kind == EFFECT_ATTEMPT && store[who].r[j].node == n -> q++ :: else fi; j++
  :: else -> break
  od;
  if :: invoked[KEY(R, n)] > q || invoked[KEY(R, n)] > allow_held[KEY(R, n)] -> FAIL(bad_bound) :: else fi;
  if :: invoked[KEY(R, n)] > allow_docs[KEY(R, n)] -> docs_bound = 1 :: else fi;
  j = 0; q = 0
}

/* The sequencer's write: the decided record, appended only at the seq it read. */
inline append_decided(who) {
  conditional_append(who, expect, rk, rn, ra, ok);
  /* Lost the race: the winner recovered the same durable prefix, so it must have appended the
     very record this process decided on. */
  if
  :: !ok && (store[who].r[expect].kind != rk || store[who].r[expect].node != rn ||
             store[who].r[expect].arg != ra) -> FAIL(bad_determinism)
  :: else
  fi;
  act = ACT_NONE; rk = 0; rn = 0; ra = 0; expect = 0; ok = 0
}

/* The fence's claim: ACT_BEGIN appends EFFECT_INTENT and EFFECT_ATTEMPT(1) in one conditional
   append at the seq read; ACT_CLAIM appends EFFECT_ATTEMPT(nat) alone. Committed: this process
   holds the attempt and invokes next (act = ACT_INVOKE, the outcome EFFECT_DONE decided).
   Lost: it calls nothing, writes nothing more, and reads again. */
inline claim_attempt(who) {
  if
  :: act == ACT_BEGIN ->
     if
     :: store[who].cnt == expect ->
        conditional_append(who, expect, EFFECT_INTENT, rn, ra, ok);
        conditional_append(who, expect + 1, EFFECT_ATTEMPT, rn, ATT_ARG(1, inst), ok);
        aseq = expect + 1
     :: else -> ok = 0;       /* the winner read the same prefix: it began the same effect */
        if :: store[who].r[expect].kind != EFFECT_INTENT || store[who].r[expect].node != rn ||
              store[who].r[expect].arg != ra -> FAIL(bad_determinism) :: else fi
     fi
  :: else ->
     conditional_append(who, expect, EFFECT_ATTEMPT, rn, ATT_ARG(nat, inst), ok);
     aseq = expect;
     /* Lost: another process claimed the same attempt number, or (a takeover of an attempt
        whose owner was still holding it) the owner recorded its outcome first. */
     if
     :: !ok && !(store[who].r[expect].node == rn &&
                 ((store[who].r[expect].kind == EFFECT_ATTEMPT && ATT_NUM(store[who].r[expect].arg) == nat) ||
                  (nat > 1 && (store[who].r[expect].kind == EFFECT_DONE ||
                               (store[who].r[expect].kind == EFFECT_RELEASED && store[who].r[expect].arg == nat - 1))))) ->
        FAIL(bad_determinism)
     :: else
     fi
  fi;
  if
  :: ok -> holder[who] = me; called[who] = 0; expired[who] = 0; hkey[who] = KEY(ra, rn);
     printf("TRAIL run %d: process %d (instance %d) claims attempt %d of node %d at seq %d\n", who, me, inst, nat, rn, aseq);
     act = ACT_INVOKE; rk = EFFECT_DONE
  :: else -> act = ACT_NONE; rk = 0; rn = 0; ra = 0; nat = 0; aseq = 0
  fi;
  expect = 0; ok = 0
}

/* The attempt's outcome, appended right after the attempt (conditional on that seq): EFFECT_DONE,
   or EFFECT_RELEASED (best effort) when the handler threw. Lost: another process took the attempt
   over (its lease had expired) and its EFFECT_ATTEMPT is there. */
inline record_outcome(who) {
  if :: threw -> rk = EFFECT_RELEASED; ra = nat :: else fi;
  conditional_append(who, aseq + 1, rk, rn, ra, ok);
  printf("TRAIL run %d: process %d appends %d (10 ATTEMPT, 11 RELEASED, 4 DONE) at seq %d: %d (1 committed)\n", who, me, rk, aseq + 1, ok);
  if
  :: ok && threw -> allow_held[hkey[who]]++; allow_docs[hkey[who]]++
  :: else
  fi;
  if
  :: !ok && !(store[who].r[aseq + 1].kind == EFFECT_ATTEMPT && store[who].r[aseq + 1].node == rn &&
              ATT_NUM(store[who].r[aseq + 1].arg) == nat + 1) -> FAIL(bad_determinism)
  :: else
  fi;
  if :: holder[who] == me -> holder[who] = NOBODY; called[who] = 0 :: else fi;
  act = ACT_NONE; rk = 0; rn = 0; ra = 0; nat = 0; aseq = 0; ok = 0; threw = 0
}

/* ------------------------------------------------------------------------------------------ */
/* Sequencer: recover from the store, decide, act, repeat. Killed at any statement; a kill     */
/* drops every local and the process starts over from the store (restart and recovery).       */
/* ------------------------------------------------------------------------------------------ */
proctype Sequencer(byte who; byte me) {
  byte ph, pn, pa, pat, pown, st, rid, i, rk_, rn_, ra_;
  bool clm, prk;
  byte act, rk, rn, ra, nat, aseq, expect, v, q, j, ek, en, ea;
  bool ok, threw;
  byte inst = me;            /* the instance id written as the owner of this process's attempts */

  /* A forked run exists once its fork committed. Forked runs are driven after every process of
     the source has finished, run 2 after run 1: their steps touch only their own logs and keys,
     so interleaving them with the source would multiply states without new interactions (the
     fork transaction itself still interleaves with every step of the source). */
end_idle:
  (store[who].cnt > 0 && MAY_DRIVE(who));
  /* One step per option; each option's guard is inside its d_step: reading and writing are
     separate steps (a stale read is possible), but no step is spent on the branch itself. A
     process blocked on a parked run or an attempt in flight is at a valid end state. */
end_decided:
  do
  :: {
       if
       :: d_step { act == ACT_NONE -> recover(who); decide(); expect = store[who].cnt; CLEAR_VIEW }
       :: d_step { act == ACT_STOP -> act = ACT_NONE; expect = 0 };
          break
       :: d_step { act == ACT_REJECT -> rejected[who] = 1; act = ACT_NONE; expect = 0 };
          break                            /* the process reports the error and stops */
       :: d_step { act == ACT_WAIT && store[who].cnt != expect -> act = ACT_NONE; expect = 0 }  /* parked */
       /* EffectInFlightError; the caller retries (waitForEffectMs) once the log moved or the
          lease expired */
       :: d_step { act == ACT_AWAIT && (store[who].cnt != expect || expired[who]) -> act = ACT_NONE; expect = 0 }
       :: d_step { act == ACT_APPEND -> append_decided(who) }
       :: d_step { (act == ACT_BEGIN || act == ACT_CLAIM) -> claim_attempt(who) }
       :: d_step { act == ACT_INVOKE && throws_left > 0 -> throws_left--; threw = 1; invoke_effect(who, ra, rn, threw); act = ACT_OUTCOME }
       :: d_step { act == ACT_INVOKE -> threw = 0; invoke_effect(who, ra, rn, threw); act = ACT_OUTCOME }  /* a kill may follow */
       :: d_step { act == ACT_OUTCOME -> record_outcome(who) }
       fi
     } unless {
       kill[me] -> d_step {
         kill[me] = 0;
         printf("TRAIL run %d: process %d killed (holding the attempt: %d)\n", who, me, holder[who] == me);
         /* a kill of the attempt's holder after its handler was called: a crash inside the window */
         if
         :: holder[who] == me ->
            if :: called[who] -> allow_held[hkey[who]]++; allow_docs[hkey[who]]++ :: else fi;
            holder[who] = NOBODY; called[who] = 0
         :: else
         fi;
#if STABLE_IDS == 0
         inst = inst ^ 8;                  /* restarted under a new instance id */
#endif
         CLEAR_VIEW; act = ACT_NONE; rk = 0; rn = 0; ra = 0; nat = 0; aseq = 0; expect = 0; ok = 0; threw = 0
       }
     }
  od;
  atomic { if :: who == 0 -> active0-- :: else fi }
}

/* Admission of RESUME(IID) from the recovered view (docs/core-api.md, "Admission"). */
inline admit_resume() {
  if
  :: ph == PH_ERROR -> reason = LOG_INVALID
  :: ph != PH_ERROR && clm -> reason = ALREADY_CONSUMED
  :: ph == PH_PARKED && !clm && pa == IID -> reason = ACCEPT
  :: ph != PH_PARKED && ph != PH_ERROR && !clm -> reason = NOT_PARKED
  :: ph == PH_PARKED && !clm && pa != IID -> reason = UNKNOWN_INTERRUPT
  fi
}

/* A resumer: validates its value, asks admission, and claims with a conditional append at the
   seq it read. A loser re-reads and is refused ALREADY_CONSUMED. */
proctype Resumer(byte who; byte me; byte value) {
  byte ph, pn, pa, pat, pown, st, rid, i, rk_, rn_, ra_;
  bool clm, prk;
  byte reason, expect, v, q, j, ek, en, ea;
  bool ok, finished;

end_wait:
  (hasparked[who] && MAY_DRIVE(who));
  do
  :: {
       d_step {
         recover(who); admit_resume();
         if :: !VALUE_VALID(value) -> reason = INVALID_VALUE :: else fi;   /* checked before claiming */
         expect = store[who].cnt; CLEAR_VIEW
       };
       d_step {
         if
         :: reason == ACCEPT ->
#if MUTANT == 1
            expect = store[who].cnt;          /* blind append: no expected-seq condition */
#endif
            conditional_append(who, expect, RESUME_CLAIMED, IID, value, ok);
            if
            :: ok -> served[who]++; finished = 1;
               if :: served[who] > 1 -> FAIL(bad_consume) :: else fi
            :: else                            /* lost the race: ask again */
            fi
         :: reason == ALREADY_CONSUMED || reason == INVALID_VALUE -> finished = 1   /* nothing written */
         :: else -> FAIL(bad_consume); finished = 1
         fi;
         reason = 0; expect = 0; ok = 0
       };
       if :: finished -> break :: else fi
     } unless {
       kill[me] -> d_step { kill[me] = 0; CLEAR_VIEW; reason = 0; expect = 0; ok = 0; finished = 0 }
     }
  od;
  atomic { if :: who == 0 -> active0-- :: else fi; finished = 0 }
}

/* Fork: one store transaction copies records 0..c of the source and appends FORKED to the new
   run; the source must come out unchanged and the new log must be prefix ++ [FORKED]. */
inline fork_run(c, tgt) {
  if
  :: store[tgt].cnt == 0 && store[0].cnt > c ->
     srclen = store[0].cnt;
     j = 0;
     do
     :: j <= c -> store[tgt].r[j].kind = store[0].r[j].kind; store[tgt].r[j].node = store[0].r[j].node;
                  store[tgt].r[j].arg = store[0].r[j].arg;
                  if :: store[0].r[j].kind == INTERRUPT_PARKED -> hasparked[tgt] = 1 :: else fi; j++
     :: else -> break
     od;
     store[tgt].r[c + 1].kind = FORKED; store[tgt].r[c + 1].node = c; store[tgt].r[c + 1].arg = tgt;
     store[tgt].cnt = c + 2; forkpt[tgt] = c;
#if MUTANT == 3
     store[0].r[store[0].cnt].kind = FORKED; store[0].r[store[0].cnt].node = c;
     store[0].r[store[0].cnt].arg = tgt; store[0].cnt++;
#endif
     /* Source preservation (append-only: an unchanged length means unchanged records, and the
        prefix check at every append pins their content). */
     if :: store[0].cnt != srclen -> FAIL(bad_fork) :: else fi;
     j = 0;
     do
     :: j <= c -> if :: store[tgt].r[j].kind != store[0].r[j].kind || store[tgt].r[j].node != store[0].r[j].node ||
                        store[tgt].r[j].arg != store[0].r[j].arg -> FAIL(bad_fork) :: else fi; j++
     :: else -> break
     od;
     j = 0; srclen = 0
  :: else -> FAIL(bad_fork)                    /* target taken or source too short: not expected */
  fi
}

/* Forks checkpoint c of run 0 twice (runs 1 and 2) once admission FORK_AT(c) accepts. init picks
   c among every checkpoint position of the uninterrupted run (one attempt per effect) and one
   non-checkpoint (6, PARKED); extra attempts shift positions, so the same c may then name another
   record. Admission and the two fork transactions are one step: the source is append-only, so a
   later fork of the same c copies the same prefix. */
proctype Forker(byte c) {
  byte reason, srclen, j, q, v, ek, en, ea;
  (store[0].cnt > c);
  d_step {
    if
    :: store[0].r[c].kind == RUN_STARTED || store[0].r[c].kind == NODE_COMPLETED -> reason = ACCEPT
    :: else -> reason = NOT_A_CHECKPOINT
    fi;
    /* Independently of admission: an accepted record is, at its place among the records other
       than the fence's, a checkpoint of the uninterrupted run (and not a fence record). */
    j = 0; q = c; v = 0;
    do
    :: j < c -> if :: store[0].r[j].kind == RESUME_CLAIMED -> v = store[0].r[j].arg :: else fi;
                if :: IS_FENCE(store[0].r[j].kind) -> q-- :: else fi; j++
    :: else -> break
    od;
    reference(q, 0, v);
    if
    :: reason == ACCEPT && (IS_FENCE(store[0].r[c].kind) || (ek != RUN_STARTED && ek != NODE_COMPLETED)) ->
       FAIL(bad_forkintent)
    :: else
    fi;
    if :: reason == ACCEPT -> fork_run(c, 1); fork_run(c, 2) :: else fi;
    reason = 0; j = 0; q = 0; v = 0; ek = 0; en = 0; ea = 0
  }
}

/* Time, for the fence's leases. The lease of an attempt that no process is executing (its owner
   crashed, or lost its outcome's append) always expires eventually: a recoverer never waits
   forever. The lease of an attempt whose owner still holds it (claimed, handler not yet returned
   or outcome not yet durable) expires at most SLOW times: a handler slower than its lease, a
   stalled store, a skewed clock. Expired stays true until the next attempt is claimed. */
#define OPEN_ATTEMPT(w) (store[w].cnt > 0 && store[w].r[store[w].cnt - 1].kind == EFFECT_ATTEMPT && !expired[w])
proctype Clock() {
end_clock:
  do
  :: d_step { OPEN_ATTEMPT(0) && holder[0] == NOBODY -> expired[0] = 1;
       printf("TRAIL run 0: the lease of the abandoned attempt at seq %d expires\n", store[0].cnt - 1) }
  :: d_step { OPEN_ATTEMPT(1) && holder[1] == NOBODY -> expired[1] = 1 }
  :: d_step { OPEN_ATTEMPT(2) && holder[2] == NOBODY -> expired[2] = 1 }
  :: d_step { OPEN_ATTEMPT(0) && holder[0] != NOBODY && slow_left > 0 ->
       slow_left--; expired[0] = 1;
       printf("TRAIL run 0: the lease of the attempt at seq %d expires while process %d holds it (handler called: %d)\n",
              store[0].cnt - 1, holder[0], called[0]);
       allow_held[hkey[0]]++;
       if :: called[0] -> allow_docs[hkey[0]]++ :: else fi }
  od
}

/* Fork-intent: continuing from a checkpoint other than the head is refused by admission, and a
   client that ignores the refusal still cannot write there: the append is conditional. */
proctype Traveller() {
  byte n, head, reason;
  atomic {
    store[0].cnt >= 3;
    head = store[0].cnt - 1;
    if :: n = 0 :: n = 1 :: n = head fi;
    if :: n == head -> reason = ACCEPT :: n > head -> reason = BEYOND_HEAD :: else -> reason = IMPLICIT_FORK fi;
    if :: n < head && reason == ACCEPT -> FAIL(bad_forkintent) :: else fi;
    /* a client that ignores the refusal writes as if continuing from n: the store must refuse */
    if :: reason != ACCEPT && store[0].cnt == n + 1 -> FAIL(bad_forkintent) :: else fi;
    n = 0; head = 0; reason = 0
  }
}

/* Kills a nondeterministically chosen process at a nondeterministic moment, CRASHES times. */
proctype Killer() {
  byte victim;
  do
  :: crashes_left > 0 ->
     atomic { crashes_left--; select(victim : 0 .. NKILL - 1); kill[victim] = 1; victim = 0 }
  :: crashes_left == 0 -> break
  od
}

/* When nothing else can move: every run ended, logs complete, effects applied once, one resumer
   served, and the two forks equal apart from run ids. */
proctype Checker() {
  byte r, p, q, v;
  timeout ->
  d_step {
    r = 0;
    do
    :: r < NRUNS ->
       if
       :: store[r].cnt > 0 ->
          /* Never stuck, never cut short: ended at the reference run's end, or stopped by the
             state-schema error at B with the last valid checkpoint (E2's) at the head. */
          if
          :: !TERMINAL(r) && !(rejected[r] && store[r].r[store[r].cnt - 1].kind == NODE_COMPLETED &&
                               store[r].r[store[r].cnt - 1].node == NE2) -> FAIL(bad_prefix)
          :: else
          fi;
          if :: served[r] > 1 -> FAIL(bad_consume) :: else fi;
          p = 0; q = 0;                       /* q: the fence's records */
          do
          :: p < store[r].cnt ->
             if
             :: store[r].r[p].kind == EFFECT_DONE && !applied[KEY(store[r].r[p].arg, store[r].r[p].node)] ->
                FAIL(bad_effect)
             :: else
             fi;
             if :: IS_FENCE(store[r].r[p].kind) -> q++ :: else fi;
             p++
          :: else -> break
          od;
          /* A failed run failed at B: 12 records besides the fence's (13 in a fork). */
          if :: store[r].r[store[r].cnt - 1].kind == RUN_FAILED && store[r].cnt - q != 12 + (forkpt[r] != NOBODY) ->
                FAIL(bad_prefix) :: else fi
       :: else
       fi;
       r++
    :: else -> break
    od;
    if :: served[0] != 1 -> FAIL(bad_consume) :: else fi;   /* exactly one resumer of run 0 served */
    /* Fork determinism: the two forks of one checkpoint, driven with the same inputs, end with the
       same records apart from run ids, compared without the fence's records (how many attempts
       an effect took depends on kills, which are not inputs). */
    if
    :: store[1].cnt > 0 ->
       if :: forkpt[1] != forkpt[2] -> FAIL(bad_fork) :: else fi;
       p = 0; q = 0;
       do
       :: p < store[1].cnt && IS_FENCE(store[1].r[p].kind) -> p++
       :: q < store[2].cnt && IS_FENCE(store[2].r[q].kind) -> q++
       :: (p >= store[1].cnt || !IS_FENCE(store[1].r[p].kind)) && (q >= store[2].cnt || !IS_FENCE(store[2].r[q].kind)) ->
          if
          :: p >= store[1].cnt || q >= store[2].cnt ->
             if :: p < store[1].cnt || q < store[2].cnt -> FAIL(bad_fork) :: else fi;
             break
          :: else ->
             v = store[1].r[p].arg;
             if :: p > forkpt[1] && v == 1 && (store[1].r[p].kind == FORKED || store[1].r[p].kind == EFFECT_INTENT ||
                                                store[1].r[p].kind == EFFECT_DONE) -> v = 2 :: else fi;
             if :: store[1].r[p].kind != store[2].r[q].kind || store[1].r[p].node != store[2].r[q].node ||
                   v != store[2].r[q].arg -> FAIL(bad_fork) :: else fi;
             p++; q++
          fi
       od
    :: else
    fi;
    r = 0; p = 0; q = 0; v = 0
  }
}

init {
  byte n;
  atomic {
    store[0].r[0].kind = RUN_STARTED; store[0].r[0].node = NA; store[0].r[0].arg = 0; store[0].cnt = 1;
    forkpt[0] = NOBODY; forkpt[1] = NOBODY; forkpt[2] = NOBODY;
    holder[0] = NOBODY; holder[1] = NOBODY; holder[2] = NOBODY;
    allow_held[0] = 1; allow_held[1] = 1; allow_held[2] = 1; allow_held[3] = 1; allow_held[4] = 1; allow_held[5] = 1;
    allow_docs[0] = 1; allow_docs[1] = 1; allow_docs[2] = 1; allow_docs[3] = 1; allow_docs[4] = 1; allow_docs[5] = 1;
    n = 0;
    active0 = SEQS + K;
    do :: n < SEQS -> run Sequencer(0, n); n++ :: else -> break od;
    /* resume values of run 0: 1, 3 (TerminalFailure in B), 0 (invalid), 1 (the same value as the
       first), 2 (B's state invalid); the first K of them */
    n = 0;
    do
    :: n < K ->
       if
       :: n % 5 == 0 || n % 5 == 3 -> run Resumer(0, SEQS + n, 1)
       :: n % 5 == 1 -> run Resumer(0, SEQS + n, 3)
       :: n % 5 == 2 -> run Resumer(0, SEQS + n, 0)
       :: n % 5 == 4 -> run Resumer(0, SEQS + n, 2)
       fi;
       n++
    :: else -> break
    od;
#if FORKS
    if :: n = 0 :: n = 1 :: n = 5 :: n = 6 :: n = 8 :: n = 12 :: n = 13 fi;
    run Forker(n);
    run Sequencer(1, SEQS + K); run Sequencer(2, SEQS + K + 1);
    run Resumer(1, NKILL, 2); run Resumer(2, NKILL, 2);   /* B's state will be invalid */
#endif
#if TRAVEL
    run Traveller();
#endif
    run Killer();
#if SEQS > 1 || STABLE_IDS == 0 || SLOW > 0
    /* Leases matter only to a process that finds another instance's attempt: with one sequencer
       per run and stable ids every attempt a process finds is its own (a fork's sequencer never
       sees the source's attempts without their outcomes: forks copy checkpoints only). */
    run Clock();
#endif
    run Checker();
    n = 0
  }
}
