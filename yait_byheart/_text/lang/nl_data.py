"""Dutch data: stop words and the endings the light stemmer in `nl` removes.

Stop words: the function words of Dutch, written for byheart. Endings: the inflectional
endings of the Snowball Dutch stemmer's first step (snowballstem.org/algorithms/dutch/
stemmer.html): "-heden", "-en(e)", "-s(e)" and a final "-e".
"""

from __future__ import annotations

STOP_WORDS = frozenset(
    """
    aan al alles als altijd andere ben bij daar dan dat de der deze die dit doch doen door dus
    een eens en er ge geen geweest haar had heb hebben heeft hem het hier hij hoe hoeveel hun
    iemand iets ik in is ja je kan kon kunnen maar me meer men met mij mijn moet na naar niet
    niets nog nu of om omdat onder ons ook op over reeds te tegen toch toen tot u uit uw van
    veel voor waar wanneer want waren was wat we welke werd wezen wie wij wil worden wordt zal
    ze zelf zich zij zijn zo zonder zou
    """.split()
)
VOWELS = frozenset("aeiouyè")
# A plural "-s" stays after a vowel or "j" ("ja's" aside), as in Snowball's step 1.
S_KEEPS_AFTER = frozenset("aeiouyèj")
ACCENTS = str.maketrans("äëïöüáéíóú", "aeiouaeiou")
