"""German data: stop words and the suffix classes of the Snowball German stemmer.

Stop words: the function words of German (articles, pronouns, auxiliaries, prepositions,
conjunctions, question words), written for byheart. Suffixes: as listed in M. F. Porter's
description of the Snowball German stemmer (snowballstem.org/algorithms/german/stemmer.html).
"""

from __future__ import annotations

STOP_WORDS = frozenset(
    """
    aber alle allem allen aller alles als also am an andere anderem anderen anderer anderes
    auch auf aus bei beim bin bis bist da damit dann das dass dasselbe dazu dein deine deinem
    deinen deiner dem demselben den denn der derer derselbe derselben des dessen dich die dies
    diese dieselbe diesem diesen dieser dieses dir doch dort du durch ein eine einem einen
    einer eines einige einigen einiger einmal er es etwas euch euer eure eurem euren eurer
    für gegen gewesen hab habe haben hat hatte hatten hier hin hinter ich ihm ihn ihnen ihr
    ihre ihrem ihren ihrer ihres im in indem ins ist jede jedem jeden jeder jedes jene jenem
    jenen jener jenes jetzt kann kein keine keinem keinen keiner keines können könnte man
    manche mein meine meinem meinen meiner meines mich mir mit muss musste nach nicht nichts
    noch nun nur ob oder ohne sehr sein seine seinem seinen seiner seines sich sie sind so
    solche solchem solchen solcher soll sollte sondern sonst über um und uns unser unsere
    unserem unseren unserer unter viel vom von vor während war waren was weil welche welchem
    welchen welcher welches wenn werde werden wer wann wie wieder wieso warum wieviel wir wird
    wo wurde wurden würde würden zu zum zur zwar zwischen viele vielen wen wem wessen
    weshalb weswegen wieso woher wohin woran worauf woraus worin worum wovon wovor wozu
    wodurch wofür wogegen womit wonach worüber worunter
    """.split()
)

VOWELS = frozenset("aeiouyäöü")
# Step 1: (a) deleted, (b) deleted (and "niss" -> "nis"), (c) "s" after an s-ending.
STEP1_A = ("ern", "em", "er")
STEP1_B = ("en", "es", "e")
S_ENDING = frozenset("bdfghklmnrt")
# Step 2: (a) deleted, (b) "st" after an st-ending with at least 3 letters before it.
STEP2_A = ("est", "en", "er")
ST_ENDING = frozenset("bdfghklmnt")
UMLAUTS = str.maketrans("äöü", "aou")
