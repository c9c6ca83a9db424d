//! Synthetic traces of Mooncake's shape, for tests and benchmarks (the real
//! traces are not shipped: see `docs/REPLAY.md` for where to get them).
//!
//! The shape: requests of 1 to `2·mean − 1` blocks (uniform, so `mean` on
//! average); a request belongs to a conversation, picked with a bias to
//! recent ones, and shares as much of that conversation's last request as
//! its length allows, then continues with new ids; a new conversation
//! starts from one of a few shared system prompts. Ids are numbered from 0
//! in order of first appearance, as in Mooncake's files.

use std::io::{self, Write};

use crate::trace::Trace;

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyntheticOptions {
    /// Requests.
    pub requests: usize,
    /// Mean blocks a request (at least 1).
    pub mean_keys: usize,
    /// One request in this many starts a new conversation.
    pub new_conversation_every: u64,
    /// Tokens a block.
    pub block_tokens: u64,
    /// The generator's seed: the same options give the same trace.
    pub seed: u64,
}

impl Default for SyntheticOptions {
    /// 12,000 requests of 24 blocks on average: the size of Mooncake's
    /// conversation trace.
    fn default() -> SyntheticOptions {
        SyntheticOptions { requests: 12_000, mean_keys: 24, new_conversation_every: 4, block_tokens: 512, seed: 1 }
    }
}

impl SyntheticOptions {
    /// These options with `requests` requests of `mean_keys` blocks on
    /// average.
    #[must_use]
    pub fn with_size(mut self, requests: usize, mean_keys: usize) -> SyntheticOptions {
        self.requests = requests;
        self.mean_keys = mean_keys.max(1);
        self
    }

    /// These options with another seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> SyntheticOptions {
        self.seed = seed;
        self
    }
}

/// SplitMix64: small, fast, and good enough to shape a trace.
#[derive(Clone, Debug)]
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by multiply-shift.
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// System prompts a new conversation starts from, and their length.
const SYSTEM_PROMPTS: u64 = 8;
const SYSTEM_PROMPT_BLOCKS: usize = 2;

/// Generates a trace.
///
/// ```
/// use kv_replay::synthetic::{SyntheticOptions, generate};
///
/// let trace = generate(&SyntheticOptions::default().with_size(1000, 24));
/// assert_eq!(trace.len(), 1000);
/// let mean = trace.block_refs() as f64 / 1000.0;
/// assert!((20.0..28.0).contains(&mean), "{mean}");
/// ```
pub fn generate(options: &SyntheticOptions) -> Trace {
    let mut random = SplitMix(options.seed);
    let mut trace = Trace::new(options.block_tokens);
    let mut next_id = 0u64;
    let mut fresh = || {
        next_id += 1;
        next_id - 1
    };
    let prompts: Vec<Vec<u64>> =
        (0..SYSTEM_PROMPTS).map(|_| (0..SYSTEM_PROMPT_BLOCKS).map(|_| fresh()).collect()).collect();
    let mut conversations: Vec<Vec<u64>> = Vec::new();
    let mut keys = Vec::new();
    let max_len = 2 * options.mean_keys.max(1) as u64 - 1;
    for _ in 0..options.requests {
        let len = 1 + random.below(max_len) as usize;
        let conversation = if conversations.is_empty() || random.below(options.new_conversation_every.max(1)) == 0 {
            conversations.push(prompts[random.below(SYSTEM_PROMPTS) as usize].clone());
            conversations.len() - 1
        } else {
            // Recent conversations are the likelier to go on: the cube of
            // a uniform number, counted back from the newest.
            let back = (random.next() as f64 / u64::MAX as f64).powi(3) * conversations.len() as f64;
            conversations.len() - 1 - (back as usize).min(conversations.len() - 1)
        };
        let history = &mut conversations[conversation];
        keys.clear();
        keys.extend(history.iter().take(len));
        while keys.len() < len {
            keys.push(fresh());
        }
        if keys.len() >= history.len() {
            history.clone_from(&keys);
        }
        let tokens = (len as u64 - 1) * options.block_tokens + 1 + random.below(options.block_tokens);
        trace.push_timed(&keys, tokens, trace.len() as u64 * 100);
    }
    trace
}

/// Writes `trace` as Mooncake NDJSON (the requests' `timestamp`s, 100 ms
/// apart in a [`generate`]d trace; an `output_length` of 0), which
/// [`Trace::parse`] reads back.
///
/// # Errors
///
/// The writer's.
pub fn write_mooncake(trace: &Trace, mut out: impl Write) -> io::Result<()> {
    for request in trace.requests() {
        write!(
            out,
            "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": 0, \"hash_ids\": [",
            request.timestamp_ms, request.tokens
        )?;
        for (i, key) in request.keys.iter().enumerate() {
            if i > 0 {
                out.write_all(b", ")?;
            }
            write!(out, "{key}")?;
        }
        out.write_all(b"]}\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceOptions;

    #[test]
    fn ids_are_numbered_in_order_of_first_appearance() {
        let trace = generate(&SyntheticOptions::default().with_size(500, 10));
        let mut next = 0;
        for request in trace.requests() {
            for &key in request.keys {
                assert!(key <= next, "{key} before {next}");
                next += u32::from(key == next);
            }
        }
        assert_eq!(next as usize, trace.distinct_keys());
    }

    #[test]
    fn round_trips_through_ndjson() {
        let trace = generate(&SyntheticOptions::default().with_size(300, 12).with_seed(7));
        let mut text = Vec::new();
        write_mooncake(&trace, &mut text).unwrap();
        assert_eq!(Trace::parse(&text[..], &TraceOptions::default()).unwrap(), trace);
    }
}
