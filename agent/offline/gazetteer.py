"""A small gazetteer: which names are countries, US states, continents and languages.

"Which country is X in?" is one of the commonest hops of multi-hop questions, and the evidence rarely
says "Zimbabwe is a country": a reader with no model needs to know the countries of the world, as a
named-entity tagger would. Names are compared after ``normalize_name``.
"""

from __future__ import annotations

import os.path

from graph_store.graph import normalize_name

_COUNTRIES = """Afghanistan|Albania|Algeria|Andorra|Angola|Antigua and Barbuda|Argentina|Armenia|Australia|Austria|
Azerbaijan|Bahamas|Bahrain|Bangladesh|Barbados|Belarus|Belgium|Belize|Benin|Bhutan|Bolivia|Bosnia and Herzegovina|
Botswana|Brazil|Brunei|Bulgaria|Burkina Faso|Burundi|Cambodia|Cameroon|Canada|Cape Verde|Central African Republic|Chad|
Chile|China|People's Republic of China|Republic of China|Taiwan|Colombia|Comoros|Congo|Democratic Republic of the Congo|
Republic of the Congo|Costa Rica|Ivory Coast|Côte d'Ivoire|Croatia|Cuba|Cyprus|Czech Republic|Czechia|Denmark|Djibouti|
Dominica|Dominican Republic|East Timor|Timor-Leste|Ecuador|Egypt|El Salvador|Equatorial Guinea|Eritrea|Estonia|
Eswatini|Swaziland|Ethiopia|Fiji|Finland|France|Gabon|Gambia|Georgia|Germany|Ghana|Greece|Grenada|Guatemala|Guinea|
Guinea-Bissau|Guyana|Haiti|Honduras|Hungary|Iceland|India|Indonesia|Iran|Iraq|Ireland|Republic of Ireland|Israel|Italy|
Jamaica|Japan|Jordan|Kazakhstan|Kenya|Kiribati|Kosovo|Kuwait|Kyrgyzstan|Laos|Latvia|Lebanon|Lesotho|Liberia|Libya|
Liechtenstein|Lithuania|Luxembourg|Madagascar|Malawi|Malaysia|Maldives|Mali|Malta|Marshall Islands|Mauritania|
Mauritius|Mexico|Micronesia|Moldova|Monaco|Mongolia|Montenegro|Morocco|Mozambique|Myanmar|Burma|Namibia|Nauru|Nepal|
Netherlands|Holland|New Zealand|Nicaragua|Niger|Nigeria|North Korea|North Macedonia|Macedonia|Norway|Oman|Pakistan|
Palau|Palestine|Panama|Papua New Guinea|Paraguay|Peru|Philippines|Poland|Portugal|Qatar|Romania|Russia|
Russian Federation|Rwanda|Saint Kitts and Nevis|Saint Lucia|Saint Vincent and the Grenadines|Samoa|San Marino|
São Tomé and Príncipe|Saudi Arabia|Senegal|Serbia|Seychelles|Sierra Leone|Singapore|Slovakia|Slovenia|Solomon Islands|
Somalia|South Africa|South Korea|Korea|South Sudan|Spain|Sri Lanka|Sudan|Suriname|Sweden|Switzerland|Syria|Tajikistan|
Tanzania|Thailand|Togo|Tonga|Trinidad and Tobago|Tunisia|Turkey|Turkmenistan|Tuvalu|Uganda|Ukraine|
United Arab Emirates|United Kingdom|UK|U.K.|Great Britain|Britain|England|Scotland|Wales|Northern Ireland|
United States|United States of America|USA|U.S.|U.S.A.|US|America|Uruguay|Uzbekistan|Vanuatu|Vatican City|Venezuela|
Vietnam|Yemen|Zambia|Zimbabwe|Soviet Union|USSR|Yugoslavia|Czechoslovakia|East Germany|West Germany|Prussia|
Austria-Hungary|Ottoman Empire|Hong Kong|Macau|Puerto Rico|Greenland|Falkland Islands|Faroe Islands|Gibraltar|
Bermuda|Kingdom of Italy|Kingdom of France|Spanish Empire|British Empire|Roman Empire|Byzantine Empire|Holy Roman Empire"""
_US_STATES = """Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|Hawaii|Idaho|
Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|Mississippi|Missouri|
Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|New York|North Carolina|North Dakota|Ohio|Oklahoma|Oregon|
Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|Washington|West Virginia|
Wisconsin|Wyoming"""
_CONTINENTS = "Africa|Antarctica|Asia|Australia|Europe|North America|South America|Oceania|Americas|Eurasia"


_LANGUAGES = """Afrikaans|Albanian|Amharic|Arabic|Aramaic|Armenian|Bengali|Bulgarian|Burmese|Cantonese|Catalan|Chinese|
Croatian|Czech|Danish|Dutch|English|Estonian|Finnish|French|Gaelic|Georgian|German|Greek|Gujarati|Hausa|Hebrew|Hindi|
Hungarian|Icelandic|Indonesian|Irish|Italian|Japanese|Kannada|Korean|Kurdish|Latin|Latvian|Lithuanian|Malay|
Malayalam|Mandarin|Marathi|Mongolian|Nepali|Norwegian|Pashto|Persian|Farsi|Polish|Portuguese|Punjabi|Romanian|
Russian|Sanskrit|Serbian|Sinhala|Slovak|Slovene|Slovenian|Somali|Spanish|Swahili|Swedish|Tagalog|Tamil|Telugu|Thai|
Tibetan|Turkish|Ukrainian|Urdu|Uzbek|Vietnamese|Welsh|Yiddish|Yoruba|Zulu|Old English|Old Norse|Esperanto"""


def _names(block: str) -> frozenset[str]:
    return frozenset(normalize_name(n) for n in block.replace("\n", "").split("|") if n.strip())


COUNTRIES = _names(_COUNTRIES)
US_STATES = _names(_US_STATES)
CONTINENTS = _names(_CONTINENTS)
LANGUAGES = _names(_LANGUAGES)


def is_language(name: str) -> bool:
    key = normalize_name(name)
    return key in LANGUAGES or (key.endswith(" language") and key[: -len(" language")] in LANGUAGES)


def place_kinds(name: str) -> set[str]:
    """The kinds a gazetteer knows a name as: "country", "state", "continent" (none when unknown)."""
    key = normalize_name(name)
    kinds = set()
    if key in COUNTRIES:
        kinds.add("country")
    if key in US_STATES:
        kinds.add("state")
    if key in CONTINENTS:
        kinds.add("continent")
    return kinds


_COUNTRY_NAMES = [n for n in _COUNTRIES.replace("\n", "").split("|") if n.strip() and len(n) > 3]
_DEMONYM_END = ("ese", "ish", "ian", "an", "ic", "i")


def country_of_demonym(word: str) -> str | None:
    """The country a nationality word is made from: the country of as many words sharing the longest start with
    it ("Chinese" -> China, "Sri Lankan" -> Sri Lanka, "Finnish" -> Finland), four letters at least (three for
    "-ish": not "Anglican" -> Angola), when one country does alone."""
    if not word[:1].isupper() or not word.endswith(_DEMONYM_END) or normalize_name(word) in COUNTRIES:
        return None
    lowered = word.lower()
    shared = {}
    for country in _COUNTRY_NAMES:
        if country.count(" ") != word.count(" "):
            continue  # "Republican" is not the Republic of China
        n = len(os.path.commonprefix([lowered, country.lower()]))
        if n >= 4 or (n == 3 and lowered.endswith("ish")):
            shared[country] = n
    best = max(shared.values(), default=0)
    winners = [c for c, n in shared.items() if n == best]
    return winners[0] if len(winners) == 1 else None
