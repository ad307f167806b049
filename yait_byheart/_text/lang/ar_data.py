"""Arabic data for light10: stop words, the prefixes and suffixes it removes, and the letters
its normalisation rewrites.

Affixes: L. S. Larkey, L. Ballesteros, M. E. Connell, "Light Stemming for Arabic Information
Retrieval", in Arabic Computational Morphology, Springer 2007 (first as SIGIR 2002), the
light10 stemmer. Stop words: common Arabic function words, written for byheart.
"""

from __future__ import annotations

STOP_WORDS_RAW = """
    في من على إلى الى عن مع هذا هذه ذلك تلك هؤلاء التي الذي الذين اللذين اللتين اللواتي أن إن
    ان كان كانت كانوا يكون تكون كما قد لقد ثم أو او ما لا لم لن هو هي هم هن هما أنا انا نحن أنت
    انت كل بعض غير بين عند منذ حتى إذا اذا لكن بل أي اي أيضا ايضا وقد وفي ومن وهو وهي ولا وكان
    فقد فى ماذا متى كيف أين اين هل كم لماذا وما به بها له لها لهم منه منها عليه عليها فيه فيها
    عام خلال حيث أكثر اكثر التى الذى إلا الا وأن وان وإن ضد نحو لدى
"""
# Diacritics (fathatan to sukun) and the superscript alef: dropped by the normalisation.
DIACRITICS = dict.fromkeys([*range(0x064B, 0x0653), 0x0670])
# Alef with madda / hamza above / hamza below read as a bare alef.
ALEFS = str.maketrans("آأإ", "ااا")
ARTICLES = ("وال", "بال", "كال", "فال", "ال", "لل")
SUFFIXES = ("ها", "ان", "ات", "ون", "ين", "يه", "ية", "ه", "ة", "ي")
