//! The embedding judge: closed questions answered from cosines between
//! each item and each criterion, and lesson relations for the ledger.
//!
//! A criterion is read as the question text followed by the criterion
//! (`"<question> <criterion>"`), and an item's answer is
//! `softmax(beta * cosines)` over the criteria (p(yes) for a yes/no
//! question). Each item's answer depends on that item and the question
//! only, never on the rest of the batch, so answers can be cached per item.

use std::cell::OnceCell;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::rc::Rc;

use silt_core::ledger::Params;
use silt_core::ledger::relate::{KeptReadings, LessonWords, relation_of_words};
use silt_core::lexical::softmax;
use silt_core::text::{negated, numbered_words, says_not_anywhere};
use silt_core::types::{Answer, Item, Judge, JudgeError, JudgeInfo, Question, Response, Usage};
use silt_core::validate::validate_question;

use crate::calibration::Calibration;
use crate::model::{Encoder, Kind};
use crate::text_map::{TextMap, same_bytes};
use silt_core::text::cosine;

/// Bytes a warm judge keeps of texts and their vectors between calls. A
/// sleep over 100k generated lessons relates pairs over about 49k
/// distinct triggers; a cache of 20k texts missed most of them and the
/// judge spent 12 µs a pair re-embedding (natively; 3.5 µs with room for
/// all of them). 64 MiB holds about 58k texts at potion's 256 dimensions
/// and 40k at MiniLM's 384, beside the model within each manifest's
/// memory (the guest peaks at 94 of 256 MiB and 419 of 768 MiB).
const CACHE_BYTES: usize = 64 << 20;

/// Bytes kept of the single words [`EmbeddingJudge::relate`] embeds where
/// two triggers differ, apart from the texts: in the same cache, the
/// 122k made-up words of a 100k-lesson sleep pushed out the triggers the
/// cache was sized for, and the judge re-embedded them.
const WORD_CACHE_BYTES: usize = 16 << 20;

/// What a kept text costs beyond its bytes and its vector's: the map's
/// and the queue's slots and the two reference counts' headers.
const ENTRY_OVERHEAD: usize = 64;

/// Texts embedded per model call.
const CHUNK: usize = 64;

/// A content-keyed cache of vectors: the same text is embedded once for
/// as long as the judge instance lives and the cache has room for it
/// (the oldest go first).
pub struct VectorCache {
    map: TextMap<Rc<[f32]>>,
    order: VecDeque<Rc<str>>,
    /// Bytes the kept entries cost, counted as [`ENTRY_OVERHEAD`] each
    /// beyond their text and vector.
    bytes: usize,
    /// The most `bytes` may reach after a call.
    budget: usize,
    /// Texts embedded (cache misses) since the judge was loaded, and their
    /// characters.
    pub embedded: u64,
    /// Characters (not bytes) of the texts embedded: the text a local
    /// judge actually ran, reported as its usage.
    pub embedded_chars: u64,
    /// Texts answered from the cache.
    pub hits: u64,
}

impl Default for VectorCache {
    fn default() -> Self {
        VectorCache::with_budget(CACHE_BYTES)
    }
}

impl VectorCache {
    /// An empty cache that keeps at most `budget` bytes between calls.
    pub fn with_budget(budget: usize) -> VectorCache {
        VectorCache {
            map: TextMap::default(),
            order: VecDeque::new(),
            bytes: 0,
            budget,
            embedded: 0,
            embedded_chars: 0,
            hits: 0,
        }
    }

    /// How many texts are kept.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The vectors of `texts`, embedding only those not seen before.
    pub fn vectors(
        &mut self,
        encoder: &Encoder,
        texts: &[&str],
    ) -> Result<Vec<Rc<[f32]>>, JudgeError> {
        self.vectors_with(texts, |chunk| {
            encoder
                .encode(chunk)
                .map_err(|e| JudgeError::Internal(e.to_string()))
        })
    }

    fn vectors_with(
        &mut self,
        texts: &[&str],
        mut encode: impl FnMut(&[&str]) -> Result<Vec<Vec<f32>>, JudgeError>,
    ) -> Result<Vec<Rc<[f32]>>, JudgeError> {
        // one lookup a text that is kept (most are, in a sleep pass)
        let mut out: Vec<Option<Rc<[f32]>>> =
            texts.iter().map(|t| self.map.get(t).cloned()).collect();
        let mut missing: Vec<&str> = texts
            .iter()
            .zip(&out)
            .filter(|(_, v)| v.is_none())
            .map(|(t, _)| *t)
            .collect();
        missing.sort_unstable();
        missing.dedup();
        self.hits += (texts.len() - missing.len()) as u64;
        for chunk in missing.chunks(CHUNK) {
            let vectors = encode(chunk)?;
            self.embedded += chunk.len() as u64;
            self.embedded_chars += chunk.iter().map(|t| t.chars().count() as u64).sum::<u64>();
            for (t, v) in chunk.iter().zip(vectors) {
                let key: Rc<str> = Rc::from(*t);
                self.bytes += Self::cost(&key, v.len());
                self.order.push_back(key.clone());
                self.map.insert(key, Rc::from(v));
            }
        }
        for (v, t) in out.iter_mut().zip(texts) {
            if v.is_none() {
                *v = self.map.get(t).cloned();
            }
        }
        while self.bytes > self.budget {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some(v) = self.map.remove(&old) {
                self.bytes -= Self::cost(&old, v.len());
            }
        }
        Ok(out
            .into_iter()
            .map(|v| v.expect("every text kept"))
            .collect())
    }

    fn cost(text: &str, dims: usize) -> usize {
        text.len() + dims * std::mem::size_of::<f32>() + ENTRY_OVERHEAD
    }
}

/// One lesson as the judge reads it: (when, prefer).
pub type LessonText<'a> = (&'a str, &'a str);

/// Relation probabilities in the order of silt_core's `RELATIONS`: merge,
/// contradict, sibling, distinct.
pub type Relation = [f64; 4];

/// The judge: a loaded encoder, its calibration and its caches.
pub struct EmbeddingJudge {
    /// The sentence encoder, of either kind.
    pub encoder: Encoder,
    /// Curves from its cosines to probabilities: the folder's own fit or
    /// its kind's.
    pub calibration: Calibration,
    /// Whole texts: questions, items, triggers and actions.
    pub cache: VectorCache,
    /// Single words, from the differences of triggers.
    pub words: VectorCache,
    /// What relating lessons reads from their words.
    read: WordsRead,
    version: String,
}

impl EmbeddingJudge {
    /// Loads the model in `dir` and its calibration.
    pub fn load(dir: &Path) -> Result<EmbeddingJudge, JudgeError> {
        let encoder = Encoder::load(dir).map_err(|e| JudgeError::Unavailable(e.to_string()))?;
        let calibration =
            Calibration::for_folder(dir, encoder.kind()).map_err(JudgeError::Unavailable)?;
        let version = format!(
            "{}+{}.{}",
            env!("CARGO_PKG_VERSION"),
            match encoder.kind() {
                Kind::Transformer => "transformer",
                Kind::Static => "static",
            },
            fingerprint(dir)
        );
        Ok(EmbeddingJudge {
            encoder,
            calibration,
            cache: VectorCache::default(),
            words: VectorCache::with_budget(WORD_CACHE_BYTES),
            read: WordsRead::default(),
            version,
        })
    }

    /// The cosine of the mean word vectors of each pair of phrases. Words
    /// are embedded one by one, so the cache holds a vocabulary, not every
    /// phrase two triggers can differ in (with MiniLM in the sandbox,
    /// embedding each difference whole made a sleep over 1,000 `agents`
    /// lessons 14 times slower).
    fn word_mean_cosines<'t>(
        &mut self,
        phrases: impl Iterator<Item = &'t (String, String)>,
    ) -> Result<Vec<f64>, JudgeError> {
        let phrases: Vec<&(String, String)> = phrases.collect();
        let words: Vec<&str> = phrases
            .iter()
            .flat_map(|(a, b)| a.split(' ').chain(b.split(' ')))
            .collect();
        let vectors = self.words.vectors(&self.encoder, &words)?;
        let mut at = 0;
        let mut mean = |phrase: &str| {
            let n = phrase.split(' ').count();
            let mut sum = vec![0f32; vectors[at].len()];
            for v in &vectors[at..at + n] {
                sum.iter_mut().zip(v.iter()).for_each(|(s, x)| *s += x);
            }
            at += n;
            let norm = sum
                .iter()
                .map(|x| x * x)
                .sum::<f32>()
                .sqrt()
                .max(f32::EPSILON);
            sum.iter_mut().for_each(|x| *x /= norm);
            sum
        };
        Ok(phrases
            .iter()
            .map(|(a, b)| {
                let va = mean(a);
                let vb = mean(b);
                cosine(&va, &vb)
            })
            .collect())
    }

    /// Relates lesson pairs (when, prefer) × 2. Identical texts count as
    /// cosine 1 whatever the model says.
    ///
    /// With `t` = P(the triggers say the same), `r` = P(the triggers are
    /// situations one action generalises over: the `siblings` curve, not
    /// STS relatedness), `a` = P(the actions point the same way), `s` =
    /// P(the actions say the same: the paraphrase curve) and `n` = 1 when
    /// exactly one action is negated (embeddings barely see negation, so
    /// polarity is read from the words):
    ///
    /// ```text
    /// merge      = t (1 - n) s
    /// contradict = t n a
    /// sibling    = (1 - t) r (1 - n) a
    /// distinct   = the rest
    /// ```
    ///
    /// `t` is also at most the paraphrase probability of the words in
    /// which the triggers differ, when each has some ("reviewing" /
    /// "testing"): the whole cosine of two templated phrases is near 1.
    ///
    /// Triggers that name different numbered things ("repo r3" / "repo
    /// r12", "Python 3.12" / "3.13"), or of which one says "not" and the
    /// other does not ("add the overwrite test case" / "add the not
    /// overwrite test case"), are not the same situation (`t` = 0),
    /// whatever their cosine: the model barely sees those words.
    ///
    /// The model's answer counts as far as it reads the texts: with `w`
    /// the square of the least [`crate::readable::readable_share`] of the pair's four
    /// texts, the relation is `w` × the above + (1 − `w`) × the lexical
    /// relation. Strings the model cannot read (identifiers, made-up
    /// words) sit near one another whatever they name.
    ///
    /// A merge retires a lesson, so it needs the actions to say the same,
    /// not merely to be about the same thing: on one situation, "redact
    /// personal data before logging" and "log the full body including
    /// personal data" sit at cosine 0.65 with MiniLM, as close as most
    /// rewordings, and merging on relatedness retired one side of six of
    /// the 30 labelled contradictions (docs/JUDGES.md). A contradiction
    /// needs the same situation and the same action with its polarity
    /// flipped ("inject CoT" / "do not inject CoT"). Actions that merely
    /// differ ("run the tests first" / "update the changelog") may well
    /// both hold, and cosines cannot tell incompatible from compatible, so
    /// they are distinct: sleep never retires a lesson on a difference
    /// this judge cannot read.
    pub fn relate(
        &mut self,
        pairs: &[(LessonText<'_>, LessonText<'_>)],
    ) -> Result<Vec<Relation>, JudgeError> {
        // each lesson of the batch is read once where it repeats: a sleep
        // sends pairs in order of their first lesson, which has a dozen
        // partners or more, and four lookups a pair were most of the
        // judge's time on a 100k-lesson ledger
        let mut lessons: Vec<LessonText<'_>> = Vec::with_capacity(pairs.len() + 1);
        let mut at: Vec<(usize, usize)> = Vec::with_capacity(pairs.len());
        let mut first: Option<usize> = None;
        for (x, y) in pairs {
            let same = |l: &LessonText<'_>| {
                same_bytes(l.0.as_bytes(), x.0.as_bytes())
                    && same_bytes(l.1.as_bytes(), x.1.as_bytes())
            };
            let i = match first.filter(|&i| same(&lessons[i])) {
                Some(i) => i,
                None => {
                    lessons.push(*x);
                    lessons.len() - 1
                }
            };
            first = Some(i);
            lessons.push(*y);
            at.push((i, lessons.len() - 1));
        }
        self.relate_by_index(&lessons, &at)
    }

    /// [`Self::relate`] of pairs given as places in `lessons` (each in
    /// bounds), each lesson read once however many pairs name it.
    pub fn relate_by_index(
        &mut self,
        lessons: &[LessonText<'_>],
        at: &[(usize, usize)],
    ) -> Result<Vec<Relation>, JudgeError> {
        // each text's words are read once while the judge has room for
        // them: a sleep sends each lesson with many partners over many
        // calls, and reading them per pair (six lowercased copies of the
        // actions, two sets of numbered words) cost more than the cosines
        // (one lookup a text for all of it: five maps cost as much again)
        let read = &mut self.read;
        read.make_room();
        let encoder = &self.encoder;
        let share = |t: &str| encoder.readable_share(t);
        let readings: Vec<[Rc<TextRead>; 2]> = lessons
            .iter()
            .map(|l| [read.text(l.0, share), read.text(l.1, share)])
            .collect();
        let shares: Vec<f64> = readings
            .iter()
            .map(|[when, prefer]| when.readable.min(prefer.readable))
            .collect();
        // how far the model's answer counts for each pair (squared: a
        // cosine is read from both texts, and a random word often passes
        // as read); where it does not count at all, its texts are not
        // even embedded
        let weights: Vec<f64> = at
            .iter()
            .map(|&(i, j)| shares[i].min(shares[j]).powi(2))
            .collect();
        let mut slots = vec![usize::MAX; lessons.len()];
        let mut texts: Vec<&str> = Vec::with_capacity(2 * lessons.len());
        for (&(i, j), &w) in at.iter().zip(&weights) {
            for k in [i, j] {
                if w > 0.0 && slots[k] == usize::MAX {
                    slots[k] = texts.len();
                    texts.extend([lessons[k].0, lessons[k].1]);
                }
            }
        }
        let vectors = self.cache.vectors(&self.encoder, &texts)?;
        let (tw, ta): (Vec<f64>, Vec<f64>) = at
            .iter()
            .zip(&weights)
            .map(|(&(i, j), &w)| {
                if w <= 0.0 {
                    return (0.0, 0.0);
                }
                let (i, j) = (slots[i], slots[j]);
                (
                    cosine(&vectors[i], &vectors[j]),
                    cosine(&vectors[i + 1], &vectors[j + 1]),
                )
            })
            .unzip();
        let c = self.calibration;
        let opposed: Vec<bool> = at
            .iter()
            .map(|&(i, j)| readings[i][1].negated != readings[j][1].negated)
            .collect();
        let other_numbers: Vec<bool> = at
            .iter()
            .map(|&(i, j)| readings[i][0].numbered != readings[j][0].numbered)
            .collect();
        // the differences are embedded only where a verdict that retires
        // a lesson is in play: each is a new text to embed, and with a
        // transformer in the sandbox they cost more than the pass. Not
        // where the triggers name other numbered things, which are other
        // situations whatever the rest says (most of the templated
        // triggers at stake: "... in repo r3" / "... in repo r12")
        let diffs: Vec<Option<(String, String)>> = at
            .iter()
            .zip(tw.iter().zip(&ta))
            .zip(opposed.iter().zip(&weights))
            .zip(&other_numbers)
            .map(|(((&(i, j), (&cw, &ca)), (&n, &w)), &other_numbers)| {
                if w <= 0.0 || other_numbers {
                    return None;
                }
                let action = if n { c.related.p(ca) } else { c.same.p(ca) };
                let at_stake = c.same.p(cw) * action >= DIFFERENCES_AT_STAKE;
                if !at_stake {
                    return None;
                }
                differing_content(readings[i][0].content(), readings[j][0].content())
            })
            .collect();
        let mut td = self.word_mean_cosines(diffs.iter().flatten())?.into_iter();
        // what the words say, read only for lessons of pairs the model
        // cannot read whole
        let partly_read: Vec<bool> = {
            let mut partly = vec![false; lessons.len()];
            for (&(i, j), &w) in at.iter().zip(&weights) {
                if w < 1.0 {
                    partly[i] = true;
                    partly[j] = true;
                }
            }
            partly
        };
        let read = &mut self.read;
        let words: Vec<Option<LessonWords>> = lessons
            .iter()
            .zip(&partly_read)
            .map(|(l, &partly)| partly.then(|| read.words.lesson(l.0, l.1)))
            .collect();
        let lexical = Params::default();
        Ok(tw
            .iter()
            .zip(&ta)
            .zip(&diffs)
            .zip(opposed.iter().zip(&other_numbers))
            .zip(at.iter().zip(&weights))
            .map(
                |((((&cw, &ca), diff), (&opposed, &other_numbers)), (&(i, j), &w))| {
                    // what the model cannot read, the words decide
                    let words = (w < 1.0).then(|| {
                        let (Some(a), Some(b)) = (&words[i], &words[j]) else {
                            unreachable!("both lessons of a partly read pair are read");
                        };
                        relation_of_words((&a.0, &a.1), (&b.0, &b.1), &lexical)
                    });
                    if w <= 0.0 {
                        return words.expect("read");
                    }
                    let same = |k: usize| readings[i][k].same == readings[j][k].same;
                    let cw = if same(0) { 1.0 } else { cw };
                    let ca = if same(1) { 1.0 } else { ca };
                    // where the triggers differ, the differences must say
                    // the same too: in templated text most words are shared,
                    // so the whole cosine is near 1 for "reviewing the parser"
                    // and "testing the parser"
                    let differences = match diff {
                        Some(_) => c.same.p(td.next().expect("one cosine a difference")),
                        None => 1.0,
                    };
                    // another repository, version or ticket is another
                    // situation, however close the rest of the words
                    let t = if other_numbers {
                        0.0
                    } else {
                        c.same.p(cw).min(differences)
                    };
                    let r = c.siblings.p(cw);
                    let a = c.related.p(ca);
                    let same_action = c.same.p(ca);
                    let n = f64::from(u8::from(opposed));
                    let merge = t * (1.0 - n) * same_action;
                    let contradict = t * n * a;
                    let sibling = (1.0 - t) * r * (1.0 - n) * a;
                    let distinct = (1.0 - merge - contradict - sibling).max(0.0);
                    let relation = [merge, contradict, sibling, distinct];
                    match words {
                        Some(words) => {
                            std::array::from_fn(|k| w * relation[k] + (1.0 - w) * words[k])
                        }
                        None => relation,
                    }
                },
            )
            .collect())
    }
}

impl Judge for EmbeddingJudge {
    fn info(&mut self) -> JudgeInfo {
        JudgeInfo {
            name: "embedding".into(),
            version: self.version.clone(),
            deterministic: true,
            cost_per_million_input_tokens: 0.0,
            preferred_batch_size: match self.encoder.kind() {
                // a call's limits bound a batch: 32 items or pairs are
                // seconds of a transformer in the sandbox
                Kind::Transformer => 32,
                // and milliseconds of a static model, where the call
                // itself is the cost: relating 1.8M pairs of a 100k
                // ledger in batches of 32 spent 1.8 s more than in 256s;
                // 4,096 is what the ledger sends at once
                Kind::Static => 4096,
            },
        }
    }

    fn ask(&mut self, question: &Question, items: &[Item]) -> Result<Response, JudgeError> {
        validate_question(question).map_err(JudgeError::InvalidQuestion)?;
        let criteria: Vec<String> = question
            .space
            .criteria()
            .iter()
            .map(|c| format!("{} {}", question.text.trim(), c.trim()))
            .collect();
        let mut texts: Vec<&str> = criteria.iter().map(String::as_str).collect();
        texts.extend(items.iter().map(|i| i.text.as_str()));
        let chars_before = self.cache.embedded_chars;
        let vectors = self.cache.vectors(&self.encoder, &texts)?;
        // the cost of a local judge is the text it actually ran: what the
        // cache already held is free
        let input_chars = (self.cache.embedded_chars - chars_before) as usize;
        let (cv, iv) = vectors.split_at(criteria.len());
        let beta = self.calibration.beta;
        let answers = iv
            .iter()
            .map(|v| {
                let cosines: Vec<f64> = cv.iter().map(|c| cosine(v, c)).collect();
                Answer::from_probabilities(&question.space, softmax(&cosines, beta))
            })
            .collect();
        Ok(Response {
            answers,
            usage: Usage::local(items.len(), input_chars),
        })
    }
}

/// What [`EmbeddingJudge::relate`] reads from each text's words, read
/// once for as long as the judge has room: a sleep over 100k lessons sends
/// each trigger in some twenty pairs, across many calls, and a reading
/// kept for one call only was a fifth of the judge's time in the sandbox.
#[derive(Default)]
struct WordsRead {
    /// What each text (trigger or action) reads as.
    texts: TextMap<Rc<TextRead>>,
    /// The sets of numbered words read so far, by id (see
    /// [`TextRead::numbered`]).
    number_sets: HashMap<BTreeSet<String>, u32>,
    /// The texts [`as_compared`] read so far, by id (see
    /// [`TextRead::same`]).
    compared: HashMap<String, u32>,
    /// What the lexical relation reads from triggers and actions.
    words: KeptReadings,
}

/// What [`EmbeddingJudge::relate`] reads from one text, whether it is a
/// trigger or an action: every field is read for every text, and each is
/// used for the side named.
struct TextRead {
    text: Rc<str>,
    /// Its [`Encoder::readable_share`].
    readable: f64,
    /// As an action: whether it is negated.
    negated: bool,
    /// As a trigger: its numbered words, and whether a word of it says
    /// "not" (names included: "inherit_no_default_features"), as the id
    /// of that set in [`WordsRead::number_sets`]: two triggers name the
    /// same numbered things, with the same polarity, when their ids are
    /// equal (comparing the sets of strings a pair was a tenth of the
    /// judge's time).
    numbered: u32,
    /// The id of [`as_compared`]`(text)` in [`WordsRead::compared`]: two
    /// texts with the same id count as the same text whatever the model
    /// says of them.
    same: u32,
    /// As a trigger: its [`content_words`], read the first time a pair
    /// at stake needs them.
    content: OnceCell<Vec<(String, String)>>,
}

impl TextRead {
    fn content(&self) -> &[(String, String)] {
        self.content.get_or_init(|| content_words(&self.text))
    }
}

/// Texts (triggers and actions) [`WordsRead`] keeps before it starts
/// afresh (each kept twice, as written and as compared: some 10 MiB at
/// most for lessons; the 100k-lesson benchmark ledgers have 37k and 49k
/// distinct triggers, and 40 and 32 actions).
const READINGS_KEPT: usize = 1 << 16;

/// Bytes of lexical readings kept between calls (see
/// [`KeptReadings::bytes`]); a call's own readings come on top, at most
/// its 4,096 pairs' lessons.
const WORD_READINGS_BYTES: usize = 24 << 20;

impl WordsRead {
    /// Starts afresh once [`READINGS_KEPT`] texts are kept: between calls
    /// only, so that ids read within a call compare.
    fn make_room(&mut self) {
        if self.texts.len() >= READINGS_KEPT {
            self.texts.clear();
            self.number_sets.clear();
            self.compared.clear();
        }
        self.words.make_room(WORD_READINGS_BYTES);
    }

    /// What `text` reads as, its share read by `share` the first time.
    fn text(&mut self, text: &str, share: impl FnOnce(&str) -> f64) -> Rc<TextRead> {
        if let Some(read) = self.texts.get(text) {
            return read.clone();
        }
        let key: Rc<str> = Rc::from(text);
        let next = self.number_sets.len() as u32;
        let mut marks = numbered_words(text);
        if says_not_anywhere(text) {
            // no numbered word is empty: this one marks the polarity
            marks.insert(String::new());
        }
        let numbered = *self.number_sets.entry(marks).or_insert(next);
        let next = self.compared.len() as u32;
        let same = *self.compared.entry(as_compared(text)).or_insert(next);
        let read = Rc::new(TextRead {
            text: key.clone(),
            readable: share(text),
            negated: negated(text),
            numbered,
            same,
            content: OnceCell::new(),
        });
        self.texts.insert(key, read.clone());
        read
    }
}

/// The least merge or contradict probability (before the differences
/// are read) at which the words the triggers differ in are compared.
/// Under it the verdict is distinct or sibling whatever they say.
const DIFFERENCES_AT_STAKE: f64 = 0.2;

/// [`differing_content`] of two triggers.
#[cfg(test)]
fn differing_words(a: &str, b: &str) -> Option<(String, String)> {
    differing_content(&content_words(a), &content_words(b))
}

/// A trigger's words as [`differing_content`] compares them: (stem,
/// word), stopwords left out.
fn content_words(t: &str) -> Vec<(String, String)> {
    use silt_core::text::{is_stopword, stem, words};
    words(t)
        .into_iter()
        .filter(|w| !is_stopword(w))
        .map(|w| (stem(&w), w))
        .collect()
}

/// The words each trigger has that the other lacks (stopwords left out,
/// compared by stem), when both have some: "reviewing" / "testing" for
/// "reviewing the parser in repo r1" / "testing the parser in repo r1".
/// None when one says all the other does (perhaps with more words).
fn differing_content(wa: &[(String, String)], wb: &[(String, String)]) -> Option<(String, String)> {
    let only = |x: &[(String, String)], y: &[(String, String)]| -> String {
        x.iter()
            .filter(|(s, _)| !y.iter().any(|(t, _)| t == s))
            .map(|(_, w)| w.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (oa, ob) = (only(wa, wb), only(wb, wa));
    (!oa.is_empty() && !ob.is_empty()).then_some((oa, ob))
}

/// A text as [`TextRead::same`] compares it: texts that differ only in
/// the case of ASCII letters and in spaces at either end are the same.
fn as_compared(text: &str) -> String {
    text.trim().to_ascii_lowercase()
}

/// A short identity of the weights, so answers cached under one model are
/// not served for another: the installer's recorded sha256 when present,
/// else the weights' size.
fn fingerprint(dir: &Path) -> String {
    let recorded = std::fs::read(dir.join("silt-model.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            v["files"]["model.safetensors"]
                .as_str()
                .map(|s| s.chars().take(12).collect::<String>())
        });
    recorded.unwrap_or_else(|| {
        std::fs::metadata(dir.join("model.safetensors"))
            .map(|m| format!("len{}", m.len()))
            .unwrap_or_else(|_| "unknown".into())
    })
}

#[cfg(test)]
mod differing_tests {
    use super::differing_words;

    #[test]
    fn the_words_each_trigger_lacks() {
        assert_eq!(
            differing_words(
                "reviewing the parser in repo r1",
                "testing the parser in repo r1"
            ),
            Some(("reviewing".into(), "testing".into()))
        );
        // one narrows the other: nothing to compare
        assert_eq!(
            differing_words("editing the parser", "editing the parsers before a release"),
            None
        );
        assert_eq!(differing_words("a b", "a b"), None);
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    #[test]
    fn a_text_is_read_once_while_there_is_room() {
        let mut read = WordsRead::default();
        let mut shares = 0;
        let mut share = |_: &str| {
            shares += 1;
            0.5
        };
        let first = read.text("do not deploy on Fridays", &mut share);
        let again = read.text("do not deploy on Fridays", &mut share);
        assert!(Rc::ptr_eq(&first, &again));
        assert_eq!((first.readable, first.negated), (0.5, true));
        assert!(!read.text("deploy on Fridays", &mut share).negated);
        assert_eq!(shares, 2);
        // the same text but for ASCII case and the spaces at its ends
        let same = |read: &mut WordsRead, t: &str| read.text(t, |_| 1.0).same;
        let deploy = same(&mut read, "deploy on Fridays");
        assert_eq!(same(&mut read, " Deploy ON fridays\n"), deploy);
        assert_ne!(same(&mut read, "deploy on Fridays!"), deploy);
        assert_ne!(same(&mut read, "deploy  on Fridays"), deploy);
        assert_ne!(
            same(&mut read, "DÉPLOY on Fridays"),
            same(&mut read, "déploy on Fridays")
        );
        assert_eq!(
            first.content(),
            [
                ("deploy".to_string(), "deploy".to_string()),
                ("friday".to_string(), "fridays".to_string())
            ]
        );
    }

    /// Triggers naming the same numbered things get one id, others
    /// another; the readings start afresh between calls once full, never
    /// within one (where ids already read must still compare).
    #[test]
    fn numbered_words_compare_by_id_and_the_readings_start_afresh_when_full() {
        let mut read = WordsRead::default();
        let numbered = |read: &mut WordsRead, t: &str| read.text(t, |_| 1.0).numbered;
        let r3 = numbered(&mut read, "editing the parser in repo r3");
        assert_eq!(numbered(&mut read, "reviewing repo R3 today"), r3);
        assert_ne!(numbered(&mut read, "editing the parser in repo r12"), r3);
        assert_eq!(
            numbered(&mut read, "few numbers here"),
            numbered(&mut read, "nor here")
        );
        // one says "not", even inside a name; the other does not
        let plain = numbered(&mut read, "add the overwrite test case");
        assert_ne!(
            numbered(&mut read, "add the not overwrite test case"),
            plain
        );
        assert_ne!(
            numbered(&mut read, "edit inherit_no_default_features"),
            plain
        );
        assert_eq!(
            numbered(&mut read, "deploying without tests"),
            numbered(&mut read, "deploy with no tests")
        );
        assert_eq!(
            numbered(&mut read, "when tests don't pass"),
            numbered(&mut read, "deploy with no tests")
        );
        let texts: Vec<String> = (0..READINGS_KEPT + 5)
            .map(|i| format!("repo r{i}"))
            .collect();
        for t in &texts {
            numbered(&mut read, t);
        }
        // over the limit within a call: kept, ids still distinct
        assert_eq!(read.texts.len(), READINGS_KEPT + 5 + 11);
        assert_ne!(
            numbered(&mut read, &texts[0]),
            numbered(&mut read, &texts[READINGS_KEPT + 4])
        );
        read.make_room();
        assert!(read.texts.is_empty() && read.number_sets.is_empty() && read.compared.is_empty());
        assert_eq!(numbered(&mut read, "repo r3 again"), 0);
    }

    /// A fake encoder's vector: the text's length, so a wrong vector shows.
    fn encode(embedded: &mut Vec<String>, chunk: &[&str]) -> Result<Vec<Vec<f32>>, JudgeError> {
        embedded.extend(chunk.iter().map(|t| t.to_string()));
        Ok(chunk.iter().map(|t| vec![t.len() as f32; 4]).collect())
    }

    #[test]
    fn keeps_texts_within_its_budget_and_drops_the_oldest_first() {
        // room for three entries of 2-byte texts and 4 dimensions
        let one = VectorCache::cost("aa", 4);
        let mut cache = VectorCache::with_budget(3 * one);
        let mut embedded = vec![];
        let got = cache
            .vectors_with(&["aa", "bb", "aa"], |c| encode(&mut embedded, c))
            .unwrap();
        assert_eq!(embedded, ["aa", "bb"]);
        assert_eq!(got.len(), 3);
        assert_eq!((cache.hits, cache.embedded), (1, 2));
        cache
            .vectors_with(&["cc", "dd"], |c| encode(&mut embedded, c))
            .unwrap();
        // four entries went in, one over the budget: the oldest left
        assert_eq!(cache.len(), 3);
        embedded.clear();
        let got = cache
            .vectors_with(&["bb", "cc", "dd", "aa"], |c| encode(&mut embedded, c))
            .unwrap();
        assert_eq!(embedded, ["aa"]);
        assert!(got.iter().all(|v| v[0] == 2.0));
        assert_eq!(cache.len(), 3);
        assert!(cache.bytes <= 3 * one);
    }
}
