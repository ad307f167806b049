"""Hindi data: stop words and the suffixes of Ramanathan and Rao's lightweight stemmer.

Suffixes: A. Ramanathan, D. D. Rao, "A Lightweight Stemmer for Hindi", EACL 2003 workshop on
computational linguistics for South Asian languages (the inflectional suffixes of nouns,
adjectives and verbs, grouped by length; the longest that matches is removed). Stop words:
common Hindi function words, written for byheart.
"""

from __future__ import annotations

STOP_WORDS_RAW = """
    का के की है हैं में से को और पर यह वह था थे थी ने एक भी ही तो इस उस इसे उसे कि जो कर हो
    गया गई गए किया किए करने करते रहा रहे रही होता होते होती तक साथ लिए बाद द्वारा अपने अपनी
    अपना या वे ये यहाँ वहाँ कुछ कोई कौन क्या कब कहाँ कैसे किस किसे किसने जिसे जिस जिन्हें जब
    तब अब नहीं ना बहुत सकता सकते सकती हुआ हुई हुए होने एवं तथा लेकिन परंतु किंतु आदि इसके
    उसके इसकी उसकी इन उन वाले वाली वाला किन कितने कितना कितनी किसको जा
"""
SUFFIXES = (
    "ाएंगी ाएंगे ाऊंगी ाऊंगा ाइयाँ ाइयों ाइयां "
    "ाएगी ाएगा ाओगी ाओगे एंगी ेंगी एंगे ेंगे ूंगी ूंगा ातीं नाओं नाएं ताओं ताएं ियाँ ियों ियां "
    "ाकर ाइए ाईं ाया ेगी ेगा ोगी ोगे ाने ाना ाते ाती ाता तीं ाओं ाएं ुओं ुएं ुआं "
    "कर ाओ िए ाई ाए ने नी ना ते ीं ती ता ाँ ां ों ें "
    "ो े ू ु ी ि ा"
).split()
# Nukta (a dot for sounds borrowed from Persian and English) and the nasal consonants whose
# half form before a consonant is written interchangeably as an anusvara.
NUKTA = "\u093c"
CHANDRABINDU, ANUSVARA, VIRAMA = "\u0901", "\u0902", "\u094d"
NASALS = "ङञणनम"
