"""English stop words: function words that match almost every stretch of dialogue.

Dropping them keeps scoring to the postings of content words (a query's "the" alone would
touch every stretch). The list is byheart's own, unchanged since the first English tokenizer.
"""

from __future__ import annotations

STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t d ll m re ve don didn doesn isn wasn im
    """.split()
)
