//! The trained evaluation: the weights of the patterns (see `pattern`), one set
//! per game phase, summed.
//!
//! The weights are fitted by least squares to real games' outcomes, exact
//! scores from 14 empties on (`flip-bench dataset` and `train`, see README),
//! and compiled in from `weights.bin`, so the crate stays free of I/O and a
//! daemon holds one copy for all its games.
//!
//! `weights.bin`: the bytes `FLPW`, a version byte (1), the number of phases
//! (a byte, 1 to 60), the number of values per phase (u32 LE), then for each
//! phase, opening last, its values as i16 LE in hundredths of a disc: each
//! shape's shared weights in shape order, then the phase's constant. With `n`
//! phases a position of `e` empties reads phase `min(e, 59) * n / 60`: 6
//! phases are 10 empties each, 30 are 2 each.

use std::sync::OnceLock;

use super::eval::{EVAL_LIMIT, Evaluate};
use super::pattern::{INSTANCES, KINDS, Patterns, cells, patterns};

/// The most phases a file may have: one an empty count from 0 to 59.
pub const MAX_PHASES: usize = 60;

const MAGIC: &[u8; 4] = b"FLPW";
const VERSION: u8 = 1;

/// The fitted weights, compiled in.
static WEIGHTS: &[u8] = include_bytes!("weights.bin");

/// The compiled-in `weights.bin`, for tools that read it as a file's bytes.
pub fn compiled_bytes() -> &'static [u8] {
    WEIGHTS
}

/// The phase of a position with `empties` empty squares when the weights have
/// `phases` phases (1 to [`MAX_PHASES`]).
pub fn phase(empties: u32, phases: usize) -> usize {
    empties.min(59) as usize * phases / MAX_PHASES
}

/// The empties of phase `ph` of `phases`: the first and the last.
pub fn phase_empties(ph: usize, phases: usize) -> (u32, u32) {
    let first = (0..60).find(|&e| phase(e, phases) >= ph).unwrap_or(60);
    let last = (0..60).rev().find(|&e| phase(e, phases) <= ph).unwrap_or(0);
    (first, last)
}

/// Values per phase: every shape's shared weights, then the constant.
pub fn values_per_phase(pats: &Patterns) -> usize {
    (0..KINDS).map(|k| pats.weights(k)).sum::<usize>() + 1
}

/// Where shape `kind`'s shared weights start within a phase's values.
pub fn shared_offsets(pats: &Patterns) -> [usize; KINDS] {
    let mut offsets = [0; KINDS];
    let mut at = 0;
    for (kind, slot) in offsets.iter_mut().enumerate() {
        *slot = at;
        at += pats.weights(kind);
    }
    offsets
}

/// The pattern evaluation, its weights spread out to one per configuration so
/// that evaluating is a table look-up per placement.
#[derive(Debug)]
pub struct PatternEval {
    /// Per phase, every shape's configurations, shape after shape.
    tables: Vec<i16>,
    /// How many phases.
    phases: usize,
    /// Per phase, the constant.
    constants: Vec<i32>,
    /// Where each shape's configurations start within a phase.
    offsets: [usize; KINDS],
    /// Configurations per phase.
    per_phase: usize,
    /// Each placement's shape's start within a phase.
    instance_offsets: [usize; INSTANCES],
}

/// The compiled-in evaluation, unpacked once.
pub fn trained() -> &'static PatternEval {
    static EVAL: OnceLock<PatternEval> = OnceLock::new();
    EVAL.get_or_init(|| {
        // The file is part of the build and a test reads it; an unreadable one
        // is a build mistake, and all-zero weights keep the engine playing.
        PatternEval::from_bytes(WEIGHTS).unwrap_or_else(|_| PatternEval::from_values(&[], 1))
    })
}

impl PatternEval {
    /// Reads `weights.bin`'s format; the error says what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<PatternEval, String> {
        let pats = patterns();
        let per_phase = values_per_phase(pats);
        let rest = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or("no FLPW at the start")?;
        let [version, phases, a, b, c, d, body @ ..] = rest else {
            return Err("the header is cut short".into());
        };
        let phases = usize::from(*phases);
        if *version != VERSION || !(1..=MAX_PHASES).contains(&phases) {
            return Err(format!("version {version} with {phases} phases"));
        }
        let stated = u32::from_le_bytes([*a, *b, *c, *d]) as usize;
        if stated != per_phase || body.len() != 2 * phases * per_phase {
            return Err(format!(
                "{stated} values a phase and {} bytes; the patterns need {per_phase} and {}",
                body.len(),
                2 * phases * per_phase
            ));
        }
        let values: Vec<i16> = body
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        Ok(PatternEval::from_values(&values, phases))
    }

    /// From the values of each of `phases` phases (missing ones count as 0),
    /// as stored; `phases` is kept within 1 to [`MAX_PHASES`].
    pub fn from_values(values: &[i16], phases: usize) -> PatternEval {
        let phases = phases.clamp(1, MAX_PHASES);
        let pats = patterns();
        let per_value_phase = values_per_phase(pats);
        let shared = shared_offsets(pats);
        let mut offsets = [0; KINDS];
        let mut per_phase = 0;
        for (kind, slot) in offsets.iter_mut().enumerate() {
            *slot = per_phase;
            per_phase += pats.configurations(kind);
        }
        let value = |phase: usize, at: usize| {
            i32::from(
                values
                    .get(phase * per_value_phase + at)
                    .copied()
                    .unwrap_or(0),
            )
        };
        let mut tables = Vec::with_capacity(phases * per_phase);
        let mut constants = vec![0; phases];
        for (phase, constant) in constants.iter_mut().enumerate() {
            for (kind, &start) in shared.iter().enumerate() {
                for index in 0..pats.configurations(kind) {
                    let at = start + pats.rank(kind, index) as usize;
                    tables.push(value(phase, at) as i16);
                }
            }
            *constant = value(phase, per_value_phase - 1);
        }
        let mut instance_offsets = [0; INSTANCES];
        for (slot, inst) in instance_offsets.iter_mut().zip(pats.instances()) {
            *slot = offsets[inst.kind];
        }
        PatternEval {
            tables,
            phases,
            constants,
            offsets,
            per_phase,
            instance_offsets,
        }
    }

    /// The unclamped sum for `p` to move against `o`.
    pub fn raw(&self, p: u64, o: u64) -> i32 {
        let empties = 64 - (p | o).count_ones();
        let ph = phase(empties, self.phases);
        let base = ph * self.per_phase;
        let table = self
            .tables
            .get(base..base + self.per_phase)
            .unwrap_or_default();
        let mut sum = self.constants.get(ph).copied().unwrap_or(0);
        let board = cells(p, o);
        for (inst, &offset) in patterns().instances().iter().zip(&self.instance_offsets) {
            let at = offset + inst.index_of(&board) as usize;
            sum += i32::from(table.get(at).copied().unwrap_or(0));
        }
        sum
    }

    /// How many phases the weights have.
    pub fn phases(&self) -> usize {
        self.phases
    }

    /// Where shape `kind`'s configurations start within a phase (for tests).
    pub fn offset(&self, kind: usize) -> usize {
        self.offsets.get(kind).copied().unwrap_or(0)
    }
}

impl Evaluate for PatternEval {
    #[inline]
    fn evaluate(&self, p: u64, o: u64) -> i32 {
        self.raw(p, o).clamp(-EVAL_LIMIT, EVAL_LIMIT)
    }
}

/// The bytes of `weights.bin` for `values` (each of `phases` phases', as
/// [`PatternEval::from_values`] takes them).
pub fn encode(values: &[i16], phases: usize) -> Vec<u8> {
    let per_phase = values_per_phase(patterns()) as u32;
    let mut out = Vec::with_capacity(10 + 2 * values.len());
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.push(phases.min(usize::from(u8::MAX)) as u8);
    out.extend_from_slice(&per_phase.to_le_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::symmetry::map_board;

    #[test]
    fn the_compiled_weights_load() {
        assert!(PatternEval::from_bytes(WEIGHTS).is_ok());
    }

    /// The evaluation recomputed the slow way: straight from the stored
    /// values, through the shared weight numbers.
    fn recomputed(values: &[i16], phases: usize, p: u64, o: u64) -> i32 {
        let pats = patterns();
        let per_phase = values_per_phase(pats);
        let shared = shared_offsets(pats);
        let base = phase(64 - (p | o).count_ones(), phases) * per_phase;
        let value = |at: usize| i32::from(values[base + at]);
        let mut sum = value(per_phase - 1);
        for (inst, index) in pats.instances().iter().zip(pats.indices(p, o)) {
            sum += value(shared[inst.kind] + pats.rank(inst.kind, index as usize) as usize);
        }
        sum
    }

    /// Positions of a game from the start: f5 d6 c3 d3 c4 f4 f6 f3 e6 e7 and
    /// a late position, as bitboards, side to move first.
    const POSITIONS: [(u64, u64); 3] = [
        (0x0000_0008_1000_0000, 0x0000_0010_0800_0000),
        (0x0000_2030_1C0C_0000, 0x0010_1008_0000_0000),
        (0x7E3C_1C0E_1E3C_7800, 0x00C3_E3F1_E1C3_8000),
    ];

    #[test]
    fn the_compiled_weights_match_a_recomputation_and_symmetries() {
        let bytes = compiled_bytes();
        let phases = usize::from(bytes[5]);
        let values: Vec<i16> = bytes[10..]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        for &(p, o) in &POSITIONS {
            let o = o & !p;
            let expected = recomputed(&values, phases, p, o);
            assert_eq!(trained().raw(p, o), expected);
            for s in 0..8 {
                assert_eq!(trained().raw(map_board(s, p), map_board(s, o)), expected);
            }
        }
    }

    #[test]
    fn a_bad_file_is_refused_not_a_panic() {
        assert!(PatternEval::from_bytes(b"").is_err());
        assert!(PatternEval::from_bytes(b"FLPW\x01\x06\x00").is_err());
        let mut short = encode(&[1, 2, 3], 6);
        short.truncate(20);
        assert!(PatternEval::from_bytes(&short).is_err());
        // Phase counts outside 1 to 60, and a body of another phase count.
        let n = values_per_phase(patterns());
        assert!(PatternEval::from_bytes(&encode(&[], 0)).is_err());
        assert!(PatternEval::from_bytes(&encode(&vec![0; 61 * n], 61)).is_err());
        assert!(PatternEval::from_bytes(&encode(&vec![0; 6 * n], 7)).is_err());
        assert!(PatternEval::from_bytes(&encode(&vec![0; 7 * n], 7)).is_ok());
    }

    #[test]
    fn encoding_round_trips() {
        for phases in [1, 6, 15, 30] {
            let n = values_per_phase(patterns()) * phases;
            let values: Vec<i16> = (0..n).map(|i| (i % 201) as i16 - 100).collect();
            let eval =
                PatternEval::from_bytes(&encode(&values, phases)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(eval.phases(), phases);
            let direct = PatternEval::from_values(&values, phases);
            for &(p, o) in &POSITIONS {
                let o = o & !p;
                assert_eq!(eval.raw(p, o), direct.raw(p, o));
                assert_eq!(eval.raw(p, o), recomputed(&values, phases, p, o));
            }
        }
    }

    #[test]
    fn phases_split_the_empties_evenly_and_in_order() {
        for phases in 1..=MAX_PHASES {
            let mut next = 0;
            for ph in 0..phases {
                let (first, last) = phase_empties(ph, phases);
                assert_eq!(first, next, "{phases} phases, phase {ph}");
                assert!(last >= first, "{phases} phases, phase {ph}");
                next = last + 1;
            }
            assert_eq!(next, 60, "{phases} phases");
            assert_eq!(phase(64, phases), phases - 1);
        }
        // Six phases are ten empties each, as the first weights had.
        assert_eq!(phase_empties(2, 6), (20, 29));
        assert_eq!(phase(23, 30), 11);
    }
}
