//! Turning text into vectors: the [`Embedder`] seam and the built-in [`HashedEmbedder`].

use futures_util::future::BoxFuture;

/// Something that turns texts into fixed-length vectors for routing.
///
/// The engine implements it over the managed server's `/v1/embeddings` and falls back to
/// [`HashedEmbedder`]; the routing head only ever sees the vectors and [`Embedder::dim`]. It
/// returns a boxed future so that `Arc<dyn Embedder>` works and a network embedder can await.
pub trait Embedder: Send + Sync {
    /// A short, stable name for status views and for telling heads apart
    /// (for example `hashed-ngrams-v1` or the served model's id).
    fn name(&self) -> &str;

    /// Length of every vector this embedder returns; a change of dimension starts a fresh head.
    fn dim(&self) -> usize;

    /// Embeds each text, in order; one vector of length [`Embedder::dim`] per text.
    fn embed<'a>(&'a self, texts: &'a [String])
        -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>>;
}

/// Why an embedder produced no vectors, so the engine can fall back or report it.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The backend (for example the managed server) failed or could not be reached.
    #[error("embedder {embedder} failed: {message}")]
    Backend {
        /// [`Embedder::name`] of the embedder that failed.
        embedder: String,
        /// What went wrong, for the log and the status view.
        message: String,
    },
    /// The backend answered with vectors of another length than it announced.
    #[error("embedder {embedder} returned {actual}-dimensional vectors, expected {expected}")]
    WrongDimension {
        /// [`Embedder::name`] of the embedder that answered.
        embedder: String,
        /// The announced [`Embedder::dim`].
        expected: usize,
        /// The length actually returned.
        actual: usize,
    },
}

/// Default dimension of [`HashedEmbedder`]: the size of common small sentence-embedding models,
/// so switching between the built-in and a served embedder often keeps the head.
pub const DEFAULT_HASHED_DIM: usize = 384;

/// Weight of one whole-word feature: exact word matches carry the most meaning.
const WORD_WEIGHT: f32 = 1.0;
/// Weight of one adjacent-word-pair feature: word order within short phrases ("pull request").
const WORD_PAIR_WEIGHT: f32 = 0.7;
/// Weight of one character 3-gram feature: a word yields several, and they only serve to relate
/// spellings ("deploy" / "deployment"), so each counts for less than a word.
const CHAR_TRIGRAM_WEIGHT: f32 = 0.3;

/// Seeds that keep the three feature kinds in separate hash spaces ("ab" the word is not "ab"
/// the 3-gram).
const WORD_SEED: u64 = 0x5755_4e49_474d_4131; // "WUNIGMA1"
const WORD_PAIR_SEED: u64 = 0x5742_4947_5241_4d32; // "WBIGRAM2"
const CHAR_TRIGRAM_SEED: u64 = 0x4354_5249_4752_4d33; // "CTRIGRM3"

/// The built-in, offline, deterministic embedder: signed feature hashing of word unigrams, word
/// bigrams and character 3-grams, L2-normalised.
///
/// It needs no model and gives the same vector for the same text on every machine and every
/// run (the hash is FNV-1a with a fixed finaliser, not `std`'s randomly seeded hasher), so
/// skills embedded yesterday still match queries embedded today. Similar wording gives similar
/// vectors; it knows nothing of synonyms, which is what the learned head and a served embedder
/// are for.
#[derive(Debug, Clone)]
pub struct HashedEmbedder {
    dim: usize,
}

impl HashedEmbedder {
    /// An embedder producing `dim`-dimensional vectors.
    ///
    /// # Panics
    /// If `dim` is zero: a zero-length vector cannot rank anything.
    pub fn new(dim: usize) -> Self {
        assert!(dim > 0, "a hashed embedder needs at least one dimension");
        HashedEmbedder { dim }
    }

    /// Embeds one text synchronously; the [`Embedder`] impl is a thin wrapper over this.
    ///
    /// Text without any letter or digit embeds as the zero vector (cosine 0 with everything).
    pub fn embed_text(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0.0f32; self.dim];
        let lowered = text.to_lowercase();
        let words: Vec<&str> = lowered
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_empty())
            .collect();

        for word in &words {
            self.add_feature(&mut vector, WORD_SEED, word.as_bytes(), WORD_WEIGHT);
            let padded: Vec<char> = std::iter::once('^')
                .chain(word.chars())
                .chain(std::iter::once('$'))
                .collect();
            for trigram in padded.windows(3) {
                let trigram: String = trigram.iter().collect();
                self.add_feature(
                    &mut vector,
                    CHAR_TRIGRAM_SEED,
                    trigram.as_bytes(),
                    CHAR_TRIGRAM_WEIGHT,
                );
            }
        }
        for pair in words.windows(2) {
            let joined = format!("{} {}", pair[0], pair[1]);
            self.add_feature(
                &mut vector,
                WORD_PAIR_SEED,
                joined.as_bytes(),
                WORD_PAIR_WEIGHT,
            );
        }

        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            vector.iter_mut().for_each(|x| *x /= norm);
        }
        vector
    }

    /// Adds `weight` with a hash-chosen sign to the hash-chosen bucket; the sign makes
    /// collisions cancel on average instead of piling up.
    fn add_feature(&self, vector: &mut [f32], seed: u64, bytes: &[u8], weight: f32) {
        let hash = stable_hash(seed, bytes);
        let bucket = (hash % self.dim as u64) as usize;
        let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
        vector[bucket] += sign * weight;
    }
}

impl Default for HashedEmbedder {
    fn default() -> Self {
        HashedEmbedder::new(DEFAULT_HASHED_DIM)
    }
}

impl Embedder for HashedEmbedder {
    fn name(&self) -> &str {
        "hashed-ngrams-v1"
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        let vectors = texts.iter().map(|text| self.embed_text(text)).collect();
        Box::pin(std::future::ready(Ok(vectors)))
    }
}

/// FNV-1a over `seed` and `bytes`, then the MurmurHash3 64-bit finaliser so that every output
/// bit (the low ones pick the bucket, the top one the sign) depends on every input byte.
/// Fixed forever: changing it changes every stored embedding.
fn stable_hash(seed: u64, bytes: &[u8]) -> u64 {
    const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = FNV_OFFSET ^ seed;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^ (hash >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn same_text_gives_the_same_unit_vector() {
        let embedder = HashedEmbedder::default();
        let first = embedder.embed_text("Deploy the staging server");
        let second = embedder.embed_text("Deploy the staging server");
        assert_eq!(first, second);
        assert_eq!(first.len(), DEFAULT_HASHED_DIM);
        assert!((cosine(&first, &first) - 1.0).abs() < 1e-5);
    }

    #[test]
    fn hash_is_pinned_across_builds() {
        // Stored skill embeddings depend on these exact values; a change here is a format change.
        // Values computed independently (Python) from the algorithm as documented.
        assert_eq!(stable_hash(0, b""), 17_280_346_270_528_514_342);
        assert_eq!(stable_hash(WORD_SEED, b"deploy"), 0xe292_55dd_f757_045f);
        assert_ne!(
            stable_hash(WORD_SEED, b"ab"),
            stable_hash(CHAR_TRIGRAM_SEED, b"ab")
        );
    }

    #[test]
    fn related_wording_is_closer_than_unrelated() {
        let embedder = HashedEmbedder::default();
        let skill = embedder.embed_text("deploy a web service to the staging cluster");
        let related = embedder.embed_text("how do I deploy my service to staging?");
        let unrelated = embedder.embed_text("write a haiku about autumn leaves");
        assert!(cosine(&skill, &related) > cosine(&skill, &unrelated) + 0.2);
    }

    #[test]
    fn text_without_words_is_the_zero_vector() {
        let embedder = HashedEmbedder::new(16);
        assert!(embedder.embed_text("  ?! ").iter().all(|&x| x == 0.0));
    }
}
