//! The five pad modes and what each means: [`source_index`] (where a padded position reads
//! from), and the period and one-bounce limit the CPU path, the GPU layout and the shaders'
//! variants are chosen by.

use std::fmt;

/// How padded elements are filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// The constant value (default zero).
    #[default]
    Constant,
    /// Mirror without repeating the edge: `3 2 | 1 2 3 | 2 1`.
    Reflect,
    /// Repeat the edge element: `1 1 | 1 2 3 | 3 3`.
    Edge,
    /// Wrap around: `2 3 | 1 2 3 | 1 2`.
    Wrap,
    /// Mirror repeating the edge: `2 1 | 1 2 3 | 3 2`.
    Symmetric,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 5] = [Mode::Constant, Mode::Reflect, Mode::Edge, Mode::Wrap, Mode::Symmetric];

    /// Every mode's name, for messages: "constant, reflect, edge, wrap or symmetric".
    pub fn names() -> String {
        let names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }

    /// The mode's name as ONNX and OpenVINO spell it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Constant => "constant",
            Mode::Reflect => "reflect",
            Mode::Edge => "edge",
            Mode::Wrap => "wrap",
            Mode::Symmetric => "symmetric",
        }
    }

    /// Whether pads longer than one period repeat the period (reflect, wrap, symmetric);
    /// constant and edge pads are the same however long.
    pub(crate) fn is_periodic(self) -> bool {
        match self {
            Mode::Reflect | Mode::Wrap | Mode::Symmetric => true,
            Mode::Constant | Mode::Edge => false,
        }
    }

    /// The period of this mode's pads along an axis of `kept` elements: `n` for wrap,
    /// `2n - 2` for reflect (1 where `n` is 1), `2n` for symmetric; 1 for constant and edge,
    /// and for an axis with nothing kept.
    pub(crate) fn period(self, kept: u64) -> u64 {
        period(self, kept).max(1)
    }

    /// The longest pad one pass over the kept elements gives without repeating the period:
    /// `n - 1` for reflect (the edge is not repeated), `n` otherwise. Longer pads take
    /// several periods (the GPU path's `multi_period` shaders).
    pub(crate) fn one_bounce_limit(self, kept: u64) -> u64 {
        match self {
            Mode::Reflect => kept.saturating_sub(1),
            Mode::Constant | Mode::Edge | Mode::Wrap | Mode::Symmetric => kept,
        }
    }

    /// The kept indices (from 0, of `kept`) that the pad positions `[a, b)` (relative to the
    /// first kept element: negative before it, `kept` and more after) read, as a closed
    /// range; `None` where they read nothing (the constant, or nothing kept). A stretch a
    /// whole period long reads every kept index; shorter ones what the index function gives
    /// (edge: its one end). Callers bind only this much of the input.
    pub(crate) fn pad_reach(self, a: i64, b: i64, kept: u64) -> Option<(u64, u64)> {
        if a >= b || kept == 0 || self == Mode::Constant {
            return None;
        }
        if self.is_periodic() && (b - a) as u64 >= self.period(kept) {
            return Some((0, kept - 1));
        }
        // Where the positions are many, the ends of a run suffice for the non-periodic mode
        // (edge reads one end); periodic stretches shorter than a period are at most 2n.
        if self == Mode::Edge {
            return source_index(self, a, kept).map(|k| (k, k));
        }
        (a..b)
            .filter_map(|j| source_index(self, j, kept))
            .fold(None, |r, k| Some(r.map_or((k, k), |(lo, hi): (u64, u64)| (lo.min(k), hi.max(k)))))
    }

    /// What the mode does with the kept elements, for messages.
    pub(crate) fn verb(self) -> &'static str {
        match self {
            Mode::Constant => "pad",
            Mode::Reflect => "reflect",
            Mode::Edge => "repeat",
            Mode::Wrap => "wrap",
            Mode::Symmetric => "mirror",
        }
    }

    /// The mode's index rule in WGSL, every piece a shader takes by mode ([`ModeWgsl`]): the
    /// one place a new mode gives the GPU its rule.
    pub(crate) fn wgsl(self) -> ModeWgsl {
        match self {
            Mode::Constant => ModeWgsl {
                source_coord: include_str!("../shaders/constant.wgsl"),
                gradient_list: include_str!("../shaders/backward/constant.wgsl"),
                gradient_mirror: 0,
                fused_kept: "if (a.step <= 1u) {\n            return j;\n        }\n        let k = j / a.step;\n        return select(NONE, k, k * a.step == j);",
                fused_pad: "return NONE;",
            },
            Mode::Reflect => ModeWgsl {
                source_coord: include_str!("../shaders/reflect.wgsl"),
                gradient_list: include_str!("../shaders/backward/periodic.wgsl"),
                gradient_mirror: 1,
                fused_kept: "return j;",
                fused_pad: "let k = (o + a.period_offset) % a.period;\n    return select(a.period - k, k, k < a.kept);",
            },
            Mode::Edge => ModeWgsl {
                source_coord: include_str!("../shaders/edge.wgsl"),
                gradient_list: include_str!("../shaders/backward/edge.wgsl"),
                gradient_mirror: 0,
                fused_kept: "return j;",
                fused_pad: "return select(a.kept - 1u, 0u, o < a.pad_before);",
            },
            Mode::Wrap => ModeWgsl {
                source_coord: include_str!("../shaders/wrap.wgsl"),
                gradient_list: include_str!("../shaders/backward/periodic.wgsl"),
                gradient_mirror: 0,
                fused_kept: "return j;",
                // The position in the period, (o - pad_before) mod period, without a signed value.
                fused_pad: "return (o + a.period_offset) % a.period;",
            },
            Mode::Symmetric => ModeWgsl {
                source_coord: include_str!("../shaders/symmetric.wgsl"),
                gradient_list: include_str!("../shaders/backward/periodic.wgsl"),
                gradient_mirror: 2,
                fused_kept: "return j;",
                fused_pad: "let k = (o + a.period_offset) % a.period;\n    return select(a.period - 1u - k, k, k < a.kept);",
            },
        }
    }
}

/// A mode's index rule in WGSL ([`Mode::wgsl`]), as each kind of shader takes it. Each is
/// [`source_index`] over the host's words for the axis (`gpu::params`, `fused`'s `Axis`);
/// the tests of each kind hold it to the CPU path's bits.
pub(crate) struct ModeWgsl {
    /// The forward kernels' `source_coord(o, d)` (`shaders/<mode>.wgsl`).
    pub source_coord: &'static str,
    /// The gradient's `list` of a kept index's images (`shaders/backward/`: constant's, edge's,
    /// or the periodic modes' one).
    pub gradient_list: &'static str,
    /// The gradient's `MIRROR` for the periodic list: 0 none (wrap), 1 reflect's (the edge
    /// not repeated), 2 symmetric's.
    pub gradient_mirror: u32,
    /// The `fused` functions' `kept_index` inside the kept range (constant mode's interior
    /// padding keeps every `step`-th, a uniform branch where there is none) ...
    pub fused_kept: &'static str,
    /// ... and past it (`NONE` where the constant goes), over `o`, `j = o - pad_before` and
    /// the axis `a`.
    pub fused_pad: &'static str,
}

/// [`ModeWgsl::fused_pad`] read on the host, over the same words (`[pad_before, kept, period,
/// period_offset]`): `fused`'s tests hold the host's reading to the plan's index function.
#[cfg(test)]
pub(crate) fn fused_pad_on_host(
    mode: Mode,
    o: u32,
    [pad_before, kept, period, period_offset]: [u32; 4],
) -> Option<u32> {
    let k = (o + period_offset) % period;
    match mode {
        Mode::Constant => None,
        Mode::Edge => Some(if o < pad_before { 0 } else { kept - 1 }),
        Mode::Wrap => Some(k),
        Mode::Reflect => Some(if k < kept { k } else { period - k }),
        Mode::Symmetric => Some(if k < kept { k } else { period - 1 - k }),
    }
}

/// [`Mode::period`] in any wide enough integer (`source_index` works in i64 and i128), for
/// `n >= 1`.
fn period<T>(mode: Mode, n: T) -> T
where
    T: Copy + Ord + From<u8> + std::ops::Sub<Output = T> + std::ops::Mul<Output = T>,
{
    let (one, two) = (T::from(1), T::from(2));
    match mode {
        Mode::Wrap => n,
        Mode::Reflect if n > one => two * (n - one),
        Mode::Symmetric => two * n,
        // A reflection of one element, and the modes without a period.
        Mode::Reflect | Mode::Constant | Mode::Edge => one,
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// `FromStr` (a mode's name, case-sensitively) is in error.rs, beside the `InvalidMode` it
// returns, so that error.rs, whose variants name a `Mode`, is the only one of the two that
// imports the other.

/// The source position for position `j` relative to a kept range of length `kept`
/// (`j` runs from `-p` to `kept + q - 1`): `Some(index in 0..kept)`, or `None` where the
/// constant goes. This is the per-mode index function every path and the GPU shaders follow.
pub(crate) fn source_index(mode: Mode, j: i64, kept: u64) -> Option<u64> {
    // i64 suffices unless the period 2n or the offset could overflow it; i128 is a library
    // call on most targets and this runs once per padded row on the CPU path.
    if kept < 1 << 60 && j.unsigned_abs() < 1 << 60 {
        return extend(mode, j, kept as i64).map(|k| k as u64);
    }
    extend(mode, j as i128, kept as i128).map(|k| k as u64)
}

/// [`source_index`] for a kept length `n`, in any wide enough integer.
fn extend<T>(mode: Mode, j: T, n: T) -> Option<T>
where
    T: Copy + Ord + From<u8> + std::ops::Sub<Output = T> + std::ops::Mul<Output = T> + RemEuclid,
{
    let (zero, one) = (T::from(0), T::from(1));
    if zero <= j && j < n {
        return Some(j);
    }
    if n == zero {
        return None;
    }
    Some(match mode {
        Mode::Constant => return None,
        Mode::Edge => j.clamp(zero, n - one),
        Mode::Wrap => j.rem_euclid_(n),
        Mode::Reflect if n == one => zero,
        Mode::Reflect => {
            let period = period(mode, n);
            let k = j.rem_euclid_(period);
            if k < n {
                k
            } else {
                period - k
            }
        }
        Mode::Symmetric => {
            let period = period(mode, n);
            let k = j.rem_euclid_(period);
            if k < n {
                k
            } else {
                period - one - k
            }
        }
    })
}

/// `rem_euclid` for the integer types `extend` runs on.
trait RemEuclid {
    fn rem_euclid_(self, n: Self) -> Self;
}

impl RemEuclid for i64 {
    fn rem_euclid_(self, n: i64) -> i64 {
        self.rem_euclid(n)
    }
}

impl RemEuclid for i128 {
    fn rem_euclid_(self, n: i128) -> i128 {
        self.rem_euclid(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_and_bounces_match_the_index_function() {
        for mode in Mode::ALL {
            for n in 1..8u64 {
                let (p, b) = (mode.period(n) as i64, mode.one_bounce_limit(n) as i64);
                let source = |j: i64| source_index(mode, j, n);
                if mode.is_periodic() {
                    assert!((-40..40).all(|j| source(j) == source(j + p)), "{mode} n={n}: period {p}");
                    if n >= 2 {
                        let shorter = (1..p).find(|q| (-40..40).all(|j| source(j) == source(j + q)));
                        assert_eq!(shorter, None, "{mode} n={n}: a period shorter than {p}");
                    }
                    // Pads up to the bounce limit walk the kept elements one way (a mirror
                    // away from the edge, wrap towards it); the next step turns or jumps.
                    let step = if mode == Mode::Wrap { -1 } else { 1 };
                    let diff = |k: i64| source(-(k + 1)).unwrap() as i64 - source(-k).unwrap() as i64;
                    assert!((1..b).all(|k| diff(k) == step), "{mode} n={n}: bounce limit {b}");
                    if b > 0 {
                        assert_ne!(diff(b), step, "{mode} n={n}: bounce limit {b} not tight");
                    }
                } else {
                    assert_eq!(p, 1, "{mode}");
                }
            }
        }
    }

    #[test]
    fn index_functions_match_numpy_examples() {
        // numpy.pad([1, 2, 3], 4, mode) on positions -4..7, as source indices.
        let expect = |mode, want: [u64; 11]| {
            let got: Vec<u64> = (-4..7).map(|j| source_index(mode, j, 3).unwrap()).collect();
            assert_eq!(got, want, "{mode}");
        };
        expect(Mode::Reflect, [0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2]);
        expect(Mode::Symmetric, [2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0]);
        expect(Mode::Wrap, [2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
        expect(Mode::Edge, [0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2]);
        assert_eq!(source_index(Mode::Constant, -1, 3), None);
        assert_eq!(source_index(Mode::Reflect, 5, 1), Some(0));
        assert_eq!(source_index(Mode::Wrap, i64::MIN, 7), Some((i64::MIN as i128).rem_euclid(7) as u64));
        assert_eq!(source_index(Mode::Reflect, -(1 << 61), u64::MAX / 2), Some(1 << 61));
        // The i64 and i128 paths agree.
        for mode in Mode::ALL {
            for n in 0..7i64 {
                for j in -30..30i64 {
                    let wide = extend(mode, j as i128, n as i128).map(|k| k as u64);
                    assert_eq!(source_index(mode, j, n as u64), wide, "{mode} j={j} n={n}");
                }
            }
        }
    }

    /// What a pad reaches is the index function's span, for every mode, kept length and
    /// stretch (a period and more read everything; edge one end), and the names are
    /// every mode's.
    #[test]
    fn pad_reach_is_the_span_of_the_index_function() {
        for mode in Mode::ALL {
            for kept in 0..7u64 {
                for a in -20i64..20 {
                    for b in a..a + 20 {
                        let span = (a..b)
                            .filter(|&j| j < 0 || j >= kept as i64)
                            .filter_map(|j| source_index(mode, j, kept))
                            .fold(None, |r: Option<(u64, u64)>, k| {
                                Some(r.map_or((k, k), |(lo, hi)| (lo.min(k), hi.max(k))))
                            });
                        // Stretches wholly before or after the kept part, as callers ask.
                        if a < 0 && b > 0 || a < kept as i64 && b > kept as i64 || (a >= 0 && a < kept as i64) {
                            continue;
                        }
                        assert_eq!(mode.pad_reach(a, b, kept), span, "{mode} kept {kept}, [{a}, {b})");
                    }
                }
            }
        }
        assert_eq!(Mode::names(), "constant, reflect, edge, wrap or symmetric");
    }
}
