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
 * Properties are ghost flags set where a violation is observed; FAIL() also asserts, so the
 * assertion run (no never claim) reports the first violation, and each LTL claim `[] !bad_x`
 * checks one property by itself (build with -DFLAGS_ONLY, run pan -a -N name). Liveness is the
 * claim `live` (pan -a -f: weak fairness).
 *
 * Bounds (override with spin -DNAME=value): K resumers, SEQS sequencers on run 0, CRASHES kills,
 * FORKS (0/1), TRAVEL (0/1). MUTANT selects a broken variant (canaries, see README.md):
 *   1 the claim is not a conditional append
 *   2 recovery does not check for a durable effect completion before re-running the handler
 *   3 fork appends its FORKED record to the source as well as to the new run
 *   4 the sequencer persists a node's state without validating it
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
#ifndef MUTANT
#define MUTANT 0
#endif

#define MAXLEN 14          /* longest log: 13 records (+1 FORKED in a forked run) */
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

/* What a sequencer does next. */
#define ACT_STOP   0
#define ACT_APPEND 1
#define ACT_INVOKE 2
#define ACT_WAIT   3
#define ACT_REJECT 4     /* the node's new state failed the schema: write nothing, raise an error */

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

/* One flag per property; each is set where a violation is observed. */
bool bad_prefix;           /* 1 prefix continuation */
bool bad_effect;           /* 2 effect exactly-once */
bool bad_fork;             /* 3 fork determinism and source preservation */
bool bad_valid;            /* 4 checkpoint validity */
bool bad_consume;          /* 5 consume-once */
bool bad_determinism;      /* 6 recovery determinism (and: every reachable log recovers) */
bool bad_forkintent;       /* fork-intent obligation */
bool late_invocation;      /* a handler ran after its completion was durable somewhere (not asserted) */

/* FLAGS_ONLY (the LTL runs): only set the flag, so each claim checks its own property. */
#ifdef FLAGS_ONLY
#define FAIL(flag) flag = 1
#else
#define FAIL(flag) flag = 1; assert(!flag)
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
/* Liveness: once crashes stop (finite budget), every run ends completed or failed, or is
   stopped by the state-schema error (parked runs are resumed: every parked run has a resumer). */
ltl live                { <> [] (SETTLED(0) && SETTLED(1) && SETTLED(2)) }

/* ------------------------------------------------------------------------------------------ */
/* Recovery: a fold over the run's records (docs/core-api.md, "Transitions"). Writes the      */
/* caller's locals ph, pn, pa, st, rid, clm, prk; uses i, rk_, rn_, ra_ as scratch and zeroes */
/* them, so no scratch value survives into the stored state.                                  */
/* ------------------------------------------------------------------------------------------ */
inline recover(who) {
  ph = PH_EMPTY; pn = 0; pa = 0; st = 0; rid = 0; clm = 0; prk = 0; i = 0;
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
        :: rk_ == EFFECT_DONE ->
           if :: ph == PH_INTENT && pn == rn_ && pa == ra_ -> ph = PH_DONE :: else -> ph = PH_ERROR fi
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

/* The next record the sequencer appends, from the recovered phase alone (docs/core-api.md,
   next action). Sets act, rk, rn, ra. */
inline decide() {
  rk = 0; rn = 0; ra = 0;
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
  :: ph == PH_AT && IS_EFFECT(pn) -> act = ACT_APPEND; rk = EFFECT_INTENT; rn = pn; ra = rid
  :: ph == PH_AT && IS_INTERRUPT(pn) -> act = ACT_APPEND; rk = INTERRUPT_PARKED; rn = pn; ra = IID
  :: ph == PH_INTENT -> act = ACT_INVOKE; rk = EFFECT_DONE; rn = pn; ra = pa   /* re-invoke, same key */
  :: ph == PH_DONE ->
#if MUTANT == 2
     act = ACT_INVOKE; rk = EFFECT_DONE; rn = pn; ra = rid
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

#define CLEAR_VIEW ph = 0; pn = 0; pa = 0; st = 0; rid = 0; clm = 0; prk = 0

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
   run's record there, given this run's fork point and claimed value. */
inline check_reference(who, p, k, n, a) {
  v = 0; j = 0;
  do
  :: j < p -> if :: store[who].r[j].kind == RESUME_CLAIMED -> v = store[who].r[j].arg :: else fi; j++
  :: else -> break
  od;
  if :: k == RESUME_CLAIMED -> v = a :: else fi;       /* the claim is an input: any valid value */
  if
  :: forkpt[who] == NOBODY || p <= forkpt[who] -> reference(p, 0, v)
  :: p == forkpt[who] + 1 -> ek = FORKED; en = forkpt[who]; ea = who
  :: else -> reference(p - 1, who, v)
  fi;
  if :: ek != k || en != n || ea != a -> FAIL(bad_prefix) :: else fi;
  j = 0; v = 0; ek = 0; en = 0; ea = 0
}

/* The store's one write for a run: append iff the run's next seq is `expect` (atomic). */
inline conditional_append(who, expect, k, n, a, ok) {
  if
  :: store[who].cnt == expect ->
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

/* Effect exactly-once. The decision: a process invokes a handler only when the log it recovered
   (the first `expect` records of its run) holds no completion for the key (bad_effect). The sink
   applies each key once and counts raw invocations. late_invocation records the stronger reading,
   "never invoked once a completion is durable anywhere"; it is a separate claim because two
   concurrent recoverers of one run can break it (see README.md). */
inline invoke_effect(who, expect, R, n) {
  j = 0;
  do
  :: j < expect ->
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
        store[j / MAXLEN].r[j % MAXLEN].node == n && store[j / MAXLEN].r[j % MAXLEN].arg == R -> late_invocation = 1
     :: else
     fi;
     j++
  :: else -> break
  od;
  if :: invoked[KEY(R, n)] < 255 -> invoked[KEY(R, n)]++ :: else fi;
  applied[KEY(R, n)] = 1;
  j = 0
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
  act = 0; rk = 0; rn = 0; ra = 0; expect = 0; ok = 0
}

/* ------------------------------------------------------------------------------------------ */
/* Sequencer: recover from the store, decide, act, repeat. Killed at any statement; a kill     */
/* drops every local and the process starts over from the store (restart and recovery).       */
/* ------------------------------------------------------------------------------------------ */
proctype Sequencer(byte who; byte me) {
  byte ph, pn, pa, st, rid, i, rk_, rn_, ra_;
  bool clm, prk;
  byte act, rk, rn, ra, expect, v, j, ek, en, ea;
  bool ok;

  /* A forked run exists once its fork committed. Forked runs are driven after every process of
     the source has finished, run 2 after run 1: their steps touch only their own logs and keys,
     so interleaving them with the source would multiply states without new interactions (the
     fork transaction itself still interleaves with every step of the source). */
end_idle:
  (store[who].cnt > 0 && MAY_DRIVE(who));
  do
  :: {
       d_step { recover(who); decide(); expect = store[who].cnt; CLEAR_VIEW };
       /* Each option's guard is inside its d_step: reading and writing are separate steps (a
          stale read is possible), but no step is spent on the branch itself. */
end_decided:
       if
       :: d_step { act == ACT_STOP -> act = 0; expect = 0 };
          break
       :: d_step { act == ACT_REJECT -> rejected[who] = 1; act = 0; expect = 0 };
          break                            /* the process reports the error and stops */
       :: d_step { act == ACT_WAIT && store[who].cnt != expect -> act = 0; expect = 0 }  /* parked */
       :: d_step { act == ACT_INVOKE -> invoke_effect(who, expect, ra, rn) };  /* a kill may follow */
          d_step { append_decided(who) }
       :: d_step { act == ACT_APPEND -> append_decided(who) }
       fi
     } unless {
       kill[me] -> d_step { kill[me] = 0; CLEAR_VIEW; act = 0; rk = 0; rn = 0; ra = 0; expect = 0; ok = 0 }
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
  byte ph, pn, pa, st, rid, i, rk_, rn_, ra_;
  bool clm, prk;
  byte reason, expect, v, j, ek, en, ea;
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
   c among every checkpoint position of the reference run and one non-checkpoint (5, PARKED).
   Admission and the two fork transactions are one step: the source is append-only, so a later
   fork of the same c copies the same prefix. */
proctype Forker(byte c) {
  byte reason, srclen, j;
  (store[0].cnt > c);
  d_step {
    if
    :: store[0].r[c].kind == RUN_STARTED || store[0].r[c].kind == NODE_COMPLETED -> reason = ACCEPT
    :: else -> reason = NOT_A_CHECKPOINT
    fi;
    if :: reason == ACCEPT && c == 5 -> FAIL(bad_forkintent) :: else fi;
    if :: reason == ACCEPT -> fork_run(c, 1); fork_run(c, 2) :: else fi;
    reason = 0
  }
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
  byte r, p, v;
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
          if :: store[r].r[store[r].cnt - 1].kind == RUN_FAILED && store[r].cnt != 12 + (forkpt[r] != NOBODY) ->
                FAIL(bad_prefix) :: else fi;
          if :: served[r] > 1 -> FAIL(bad_consume) :: else fi;
          p = 0;
          do
          :: p < store[r].cnt ->
             if
             :: store[r].r[p].kind == EFFECT_DONE && !applied[KEY(store[r].r[p].arg, store[r].r[p].node)] ->
                FAIL(bad_effect)
             :: else
             fi;
             p++
          :: else -> break
          od
       :: else
       fi;
       r++
    :: else -> break
    od;
    if :: served[0] != 1 -> FAIL(bad_consume) :: else fi;   /* exactly one resumer of run 0 served */
    /* Fork determinism: the two forks of one checkpoint, driven with the same inputs. */
    if
    :: store[1].cnt > 0 ->
       if :: store[1].cnt != store[2].cnt || forkpt[1] != forkpt[2] -> FAIL(bad_fork) :: else fi;
       p = 0;
       do
       :: p < store[1].cnt ->
          v = store[1].r[p].arg;
          if :: p > forkpt[1] && v == 1 && (store[1].r[p].kind == FORKED || store[1].r[p].kind == EFFECT_INTENT ||
                                             store[1].r[p].kind == EFFECT_DONE) -> v = 2 :: else fi;
          if :: store[1].r[p].kind != store[2].r[p].kind || store[1].r[p].node != store[2].r[p].node ||
                v != store[2].r[p].arg -> FAIL(bad_fork) :: else fi;
          p++
       :: else -> break
       od
    :: else
    fi;
    r = 0; p = 0; v = 0
  }
}

init {
  byte n;
  atomic {
    store[0].r[0].kind = RUN_STARTED; store[0].r[0].node = NA; store[0].r[0].arg = 0; store[0].cnt = 1;
    forkpt[0] = NOBODY; forkpt[1] = NOBODY; forkpt[2] = NOBODY;
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
    if :: n = 0 :: n = 1 :: n = 4 :: n = 5 :: n = 7 :: n = 10 :: n = 11 fi;
    run Forker(n);
    run Sequencer(1, SEQS + K); run Sequencer(2, SEQS + K + 1);
    run Resumer(1, NKILL, 2); run Resumer(2, NKILL, 2);   /* B's state will be invalid */
#endif
#if TRAVEL
    run Traveller();
#endif
    run Killer();
    run Checker();
    n = 0
  }
}
