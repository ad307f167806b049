"""French, Spanish, Italian and Portuguese data: stop words and the plural and gender endings
that the light stemmers in `romance` remove.

Stop words: the function words of each language (articles, pronouns, prepositions,
conjunctions, common auxiliaries, question words), written for byheart. Endings: after
J. Savoy's light stemmers, which remove only inflections of number and gender (J. Savoy, "A
stemming procedure and stopword list for general French corpora", JASIS 50(10), 1999; and his
Spanish, Italian and Portuguese variants, members.unine.ch/jacques.savoy/clef/).
"""

from __future__ import annotations

FR_STOP = frozenset(
    """
    a à au aux avec ce ces cet cette ceci cela ça dans de des du elle elles en et eux il ils
    je la le les leur leurs lui ma mais me même mes moi mon ne nos notre nous on ou où par pas
    pour qu que qui quel quelle quels quelles quoi sa se ses son sur ta te tes toi ton tu un
    une vos votre vous c d j l m n s t y été était étaient est sont suis sommes êtes ai as avons
    avez ont eu fut sera seront comme plus combien comment pourquoi quand lors dont
    """.split()
)
ES_STOP = frozenset(
    """
    a al algo algunas algunos ante antes como con contra cual cuál cuando cuándo cuánto cuántos
    cuántas cómo de del desde donde dónde durante e el él ella ellas ellos en entre era eran es
    esa esas ese eso esos esta estas este esto estos está están fue fueron ha han había habían
    hasta hay la las le les lo los más me mi mis muy mucho muchos nada ni no nos nosotros o otra
    otras otro otros para pero poco por porque qué que quien quienes se sea ser si sí sido sin
    sobre su sus también tanto te tu tus un una uno unos y ya yo
    """.split()
)
IT_STOP = frozenset(
    """
    a ad agli ai al all alla alle allo anche c che chi ci come con contro cui da dagli dai dal
    dall dalla dalle dallo degli dei del dell della delle dello di dove e ed è era erano fu
    furono gli ha hanno ho i il in io l la le lei li lo loro lui ma mi ne negli nei nel nell
    nella nelle nello noi non o per più quale quali quando quanti quanto quella quelle quelli
    quello questa queste questi questo se si sono stata stati stato su sua sue sugli sui sul
    sull sulla sulle suo suoi tra fra tu tutti tutto un una uno voi essere
    """.split()
)
PT_STOP = frozenset(
    """
    a à ao aos as às com como da das de dela dele deles do dos e é ela elas ele eles em entre
    era eram essa esse esta este eu foi foram há isso isto já lhe mais mas me mesmo meu minha
    muito na nas não nem no nos nós num numa o onde os ou para pela pelas pelo pelos por qual
    quais quando quanto quantos quantas que quem se sem ser seu seus sua suas são só também
    te um uma umas uns você
    """.split()
)
# Acute and grave accents fall away before stemming (they move or vanish with inflection:
# "nación", "naciones"); cedilla, tilde and the rest stay.
ACCENTS = str.maketrans("áàéèíìóòúù", "aaeeiioouu")
VOWELS = frozenset("aeiou")
