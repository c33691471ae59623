//! A routing head's learned state as plain data, and its versioned, checksummed byte form.

use sha2::{Digest, Sha256};

use super::head::SCALAR_FEATURE_COUNT;

/// Leading bytes of every saved head, so a blob of anything else is recognised as such.
const MAGIC: &[u8; 8] = b"LULLHEAD";
/// Version of the byte layout written by [`HeadSnapshot::to_bytes`].
pub const SNAPSHOT_FORMAT_VERSION: u32 = 1;
/// magic, version, dim, hidden size, update count, baseline, output bias.
const HEADER_LEN: usize = 8 + 4 + 4 + 4 + 8 + 4 + 4;
const CHECKSUM_LEN: usize = 32;

/// A routing head's weights, baseline and update count, copied out under one lock.
///
/// This is what gets persisted every `persist_interval` updates and what a training job's
/// checkpoint holds. The skills and their stats are not part of it: those come from the skills
/// directory and the outcome log.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadSnapshot {
    /// Embedding dimension the head was built for.
    pub dim: usize,
    /// Hidden units.
    pub hidden_size: usize,
    /// First layer, `hidden_size × (2·dim + 3)`, row-major; each row's columns are the query
    /// block, the skill block, then the weights of cosine, success rate and scaled log-uses.
    pub first_layer: Vec<f32>,
    /// First-layer bias, one per hidden unit.
    pub first_bias: Vec<f32>,
    /// Second-layer weights, one per hidden unit.
    pub output: Vec<f32>,
    /// Second-layer bias.
    pub output_bias: f32,
    /// REINFORCE baseline (moving average of rewards).
    pub baseline: f32,
    /// Outcomes learned from.
    pub update_count: u64,
}

/// Why a saved blob cannot become a head. The engine logs it and starts a fresh head.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SnapshotError {
    /// Too short to hold a header and checksum, or shorter than its header announces.
    #[error("routing head blob is truncated: {actual} bytes, expected {expected}")]
    Truncated {
        /// Bytes needed.
        expected: usize,
        /// Bytes present.
        actual: usize,
    },
    /// Does not start with the routing head marker.
    #[error("blob is not a saved routing head (bad magic bytes)")]
    NotAHead,
    /// Written by a newer or older layout this build cannot read.
    #[error("routing head format version {found} is not supported (this build reads version {supported})")]
    UnsupportedVersion {
        /// Version in the blob.
        found: u32,
        /// Version this build reads and writes.
        supported: u32,
    },
    /// The bytes were altered after saving.
    #[error("routing head blob is corrupt: checksum mismatch")]
    ChecksumMismatch,
    /// Saved for another embedding dimension (the embedder changed); the old head stays stored.
    #[error(
        "routing head is for {found}-dimensional embeddings, the embedder now gives {expected}"
    )]
    DimensionMismatch {
        /// Dimension in use now.
        expected: usize,
        /// Dimension of the saved head.
        found: usize,
    },
    /// Field lengths or values do not describe a usable head.
    #[error("routing head snapshot is inconsistent: {0}")]
    Inconsistent(String),
}

impl HeadSnapshot {
    /// Encodes the snapshot: a fixed little-endian header (magic, format version, dimension,
    /// hidden size, update count, baseline, output bias), the `f32` weights, and a SHA-256 of
    /// all of that. A raw binary layout keeps a 384-dimension head at about 200 KB, written every
    /// few outcomes; the checksum catches corruption that would still parse.
    pub fn to_bytes(&self) -> Vec<u8> {
        let float_count = self.first_layer.len() + self.first_bias.len() + self.output.len();
        let mut bytes = Vec::with_capacity(HEADER_LEN + 4 * float_count + CHECKSUM_LEN);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&SNAPSHOT_FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&(self.dim as u32).to_le_bytes());
        bytes.extend_from_slice(&(self.hidden_size as u32).to_le_bytes());
        bytes.extend_from_slice(&self.update_count.to_le_bytes());
        bytes.extend_from_slice(&self.baseline.to_le_bytes());
        bytes.extend_from_slice(&self.output_bias.to_le_bytes());
        for value in self
            .first_layer
            .iter()
            .chain(&self.first_bias)
            .chain(&self.output)
        {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        let checksum = Sha256::digest(&bytes);
        bytes.extend_from_slice(&checksum);
        bytes
    }

    /// Decodes [`HeadSnapshot::to_bytes`] output, insisting on `expected_dim` (the current
    /// embedder's dimension).
    pub fn from_bytes(bytes: &[u8], expected_dim: usize) -> Result<Self, SnapshotError> {
        let minimum = HEADER_LEN + CHECKSUM_LEN;
        if bytes.len() < minimum {
            return Err(SnapshotError::Truncated {
                expected: minimum,
                actual: bytes.len(),
            });
        }
        if &bytes[..MAGIC.len()] != MAGIC {
            return Err(SnapshotError::NotAHead);
        }
        let mut header = HeaderReader {
            bytes,
            position: MAGIC.len(),
        };
        let version = header.u32();
        if version != SNAPSHOT_FORMAT_VERSION {
            return Err(SnapshotError::UnsupportedVersion {
                found: version,
                supported: SNAPSHOT_FORMAT_VERSION,
            });
        }
        let (body, checksum) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
        if Sha256::digest(body).as_slice() != checksum {
            return Err(SnapshotError::ChecksumMismatch);
        }
        let dim = header.u32() as usize;
        if dim != expected_dim {
            return Err(SnapshotError::DimensionMismatch {
                expected: expected_dim,
                found: dim,
            });
        }
        let hidden_size = header.u32() as usize;
        let update_count = header.u64();
        let baseline = header.f32();
        let output_bias = header.f32();

        let first_layer_len = hidden_size * (2 * dim + SCALAR_FEATURE_COUNT);
        let expected_len = HEADER_LEN + 4 * (first_layer_len + 2 * hidden_size) + CHECKSUM_LEN;
        if body.len() + CHECKSUM_LEN != expected_len {
            return Err(SnapshotError::Truncated {
                expected: expected_len,
                actual: bytes.len(),
            });
        }
        let mut floats = body[HEADER_LEN..]
            .chunks_exact(4)
            .map(|chunk| f32::from_le_bytes(chunk.try_into().expect("chunks of 4")));
        let first_layer: Vec<f32> = floats.by_ref().take(first_layer_len).collect();
        let first_bias: Vec<f32> = floats.by_ref().take(hidden_size).collect();
        let output: Vec<f32> = floats.collect();

        let snapshot = HeadSnapshot {
            dim,
            hidden_size,
            first_layer,
            first_bias,
            output,
            output_bias,
            baseline,
            update_count,
        };
        snapshot.validate(expected_dim)?;
        Ok(snapshot)
    }

    /// Checks that the fields describe a usable head of dimension `expected_dim`.
    pub(crate) fn validate(&self, expected_dim: usize) -> Result<(), SnapshotError> {
        if self.dim != expected_dim {
            return Err(SnapshotError::DimensionMismatch {
                expected: expected_dim,
                found: self.dim,
            });
        }
        if self.hidden_size == 0 {
            return Err(SnapshotError::Inconsistent("no hidden units".into()));
        }
        let first_layer_len = self.hidden_size * (2 * self.dim + SCALAR_FEATURE_COUNT);
        if self.first_layer.len() != first_layer_len
            || self.first_bias.len() != self.hidden_size
            || self.output.len() != self.hidden_size
        {
            return Err(SnapshotError::Inconsistent(format!(
                "layer sizes {}/{}/{} do not match dimension {} and {} hidden units",
                self.first_layer.len(),
                self.first_bias.len(),
                self.output.len(),
                self.dim,
                self.hidden_size
            )));
        }
        let all_finite = self
            .first_layer
            .iter()
            .chain(&self.first_bias)
            .chain(&self.output)
            .chain([&self.output_bias, &self.baseline])
            .all(|value| value.is_finite());
        if !all_finite {
            return Err(SnapshotError::Inconsistent(
                "a weight is not a finite number".into(),
            ));
        }
        Ok(())
    }
}

/// Reads the fixed-size header fields in order; lengths were checked before.
struct HeaderReader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl HeaderReader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let field = self.bytes[self.position..self.position + N]
            .try_into()
            .expect("header length was checked");
        self.position += N;
        field
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }

    fn f32(&mut self) -> f32 {
        f32::from_le_bytes(self.take())
    }
}
