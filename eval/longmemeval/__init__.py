"""``python -m eval longmemeval``: how much of LongMemEval_s's evidence reaches what is sent.

LongMemEval (Wu et al., ICLR 2025): each question comes with its own chat history (about 50
sessions, 500 turns) and marks the turns that hold its answer (``has_answer``). Method, per
question and budget: the sessions are sorted by date and every turn is appended in order with
its session's date as ``when``; then the question is composed. Systems:

- ``byheart``: a fresh ``Memory(budget=B)``, one compose of the question.
- ``byheart-live``: the same Memory replayed as a chat (eval/locomo/live.py): each user turn is
  a model call (compose it, then append it), replies are appended without a call, and the
  question is composed last with the sticky state; prefix reuse comes from the ``Ledger``.
  A blank user turn asks nothing, so it makes no call; nor does a user turn longer than
  ``ceiling x budget``, which compose refuses (no application could send it; counted).
- ``turn-bm25``: single turns ranked by ``yait_byheart.BM25`` for the question, whole turns
  added best first while they fit (one that does not fit is skipped), the question included
  in the budget (``TurnBM25`` of eval/locomo/systems.py).
- ``hybrid-minilm``: ``byheart`` with the MiniLM hybrid retriever (eval/minilm.py), only when
  asked for and its packages import.

Metrics (abstention questions, ``question_id`` ending ``_abs``, are skipped: no evidence):

- **turn recall**: share of the question's ``has_answer`` turns reached. For byheart a turn is
  reached when its index is in the compose result's ``included``, which lists every turn sent
  in whole or in part; ``partial`` is the subset sent only in part (a long turn is cut into
  pieces), so "in included or partial" is "in included". The index rule is used rather than
  matching text because byheart sends turns with their relative dates resolved ("yesterday
  [29 May 2023]"), which a substring test would miss, and a short turn repeated elsewhere
  would match falsely. The JSON also keeps ``whole_turn_recall`` (``included`` minus
  ``partial``). For turn-bm25 a turn is reached when it is sent whole (its index chosen).
- **session recall**: share of the question's ``answer_session_ids`` with at least one
  reached evidence turn, counting only answer sessions that hold an evidence turn (in the dev
  split 9 answer sessions have none and could never count).
- **chars**: characters of all messages sent (the question included); **append µs/turn**:
  building the Memory (or the BM25 index) over the history, per turn; **compose ms**: per
  compose call (byheart's first compose also indexes the history; live: every call).

Recalls are means over questions (all, and per question type); the times are totals over
questions divided by turns or by compose calls.
"""
