//! The pad's gradient in Burn's ops, for what the core's gradient kernel does not take (float
//! types other than float32; sums past its per-lane bound; interior padding past its limits): the sum, over every output
//! position that read an input element, of the output's gradient there. Axis by axis (the
//! pad's index map is a product of per-axis maps, so its adjoint is the product of per-axis
//! adjoints), last axis first, as Burn's own pad's backward runs and `wgpu_pad::adjoint`
//! documents. Burn's ops do the work on Burn's device (slices, flips, sums, adds).

use burn::backend::{Backend, TensorMetadata};
use burn::tensor::{Shape, Slice};
use wgpu_pad::{AxisMap, Lattice, Mode, PadPlan};

/// A stretch of one axis's output whose sources move one way: `len` outputs from `out_start`
/// read the inputs from `in_start` up (`step` 1), the same inputs from the top down (-1), or
/// all the one input `in_start` (0: an edge pad's border).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub out_start: usize,
    pub len: usize,
    pub in_start: usize,
    pub step: i8,
}

/// An axis's output cut into runs: the border before, the border after, then the kept inputs,
/// each border cut where its sources turn (a reflection) or jump (a wrap). Constant borders
/// read nothing. The order is the order of the sums: Burn's own pad's backward adds the two
/// borders' gradients first and the kept part's last (its steps run in the reverse of its
/// forward's order), and so, to give its bits, does this.
pub(crate) fn runs(axis: &AxisMap, mode: Mode) -> Vec<Run> {
    let kept_end = axis.pad_before + axis.kept;
    let regions = [(0, axis.pad_before), (kept_end, axis.out_len), (axis.pad_before, kept_end)];
    let mut runs = Vec::new();
    for (start, end) in regions {
        let mut o = start;
        while o < end {
            let Some(first) = axis.source(mode, o) else {
                o += 1;
                continue;
            };
            let next = if o + 1 < end { axis.source(mode, o + 1) } else { None };
            let step = match next.map(|n| n as i64 - first as i64) {
                Some(d @ -1..=1) => d as i8,
                _ => 1,
            };
            let mut len = 1;
            while o + len < end
                && axis.source(mode, o + len).map(|s| s as i64) == Some(first as i64 + step as i64 * len as i64)
            {
                len += 1;
            }
            let in_start = match step {
                -1 => first + 1 - len,
                _ => first,
            };
            runs.push(Run { out_start: o, len, in_start, step });
            o += len;
        }
    }
    runs
}

/// What the backward keeps of a pad: each axis's runs (empty for an axis left as it is), or
/// for interior padding each axis's kept elements; and the input's shape.
#[derive(Debug, Clone)]
pub(crate) struct Adjoint {
    axes: Vec<Option<Axis>>,
    in_shape: Vec<usize>,
}

/// One axis's adjoint.
#[derive(Debug, Clone)]
enum Axis {
    /// Sums over runs of the output's gradient.
    Runs(Vec<Run>),
    /// Interior padding's: the kept elements' gradients are every `step`-th of the output's,
    /// placed among zeros (each input element has one image at most: no sums).
    Strided(Lattice),
}

impl Adjoint {
    pub(crate) fn of(plan: &PadPlan) -> Adjoint {
        let axes = (0..plan.in_shape().len())
            .map(|d| match plan.has_interior() {
                true => {
                    let l = plan.lattice(d);
                    let whole = l.step == 1 && l.count == plan.in_shape()[d] && l.count == plan.out_shape()[d];
                    (!whole).then_some(Axis::Strided(l))
                }
                false => {
                    let a = plan.axes()[d];
                    (!a.is_identity()).then(|| Axis::Runs(runs(&a, plan.mode())))
                }
            })
            .collect();
        Adjoint { axes, in_shape: plan.in_shape().to_vec() }
    }

    /// The input's gradient from the output's, `grad`.
    pub(crate) fn apply<B: Backend>(&self, mut grad: B::FloatTensorPrimitive) -> B::FloatTensorPrimitive {
        for (axis, adjoint) in self.axes.iter().enumerate().rev() {
            let Some(adjoint) = adjoint else { continue };
            let device = grad.device();
            let dtype = grad.dtype();
            let mut shape: Vec<usize> = grad.shape().to_vec();
            shape[axis] = self.in_shape[axis];
            let along = |range: Slice, shape: &[usize]| -> Vec<Slice> {
                shape.iter().enumerate().map(|(a, &n)| if a == axis { range } else { Slice::from(0..n) }).collect()
            };
            let mut acc = B::float_zeros(Shape::from(shape.clone()), &device, dtype.into());
            let out_shape: Vec<usize> = grad.shape().to_vec();
            match adjoint {
                Axis::Runs(runs) => {
                    for run in runs {
                        let range = Slice::from(run.out_start..run.out_start + run.len);
                        let mut part = B::float_slice(grad.clone(), &along(range, &out_shape));
                        let len = match run.step {
                            -1 => {
                                part = B::float_flip(part, &[axis]);
                                run.len
                            }
                            0 => {
                                part = B::float_sum_dim(part, axis);
                                1
                            }
                            _ => run.len,
                        };
                        let target = along(Slice::from(run.in_start..run.in_start + len), &shape);
                        let sum = B::float_add(B::float_slice(acc.clone(), &target), part);
                        acc = B::float_slice_assign(acc, &target, sum);
                    }
                }
                Axis::Strided(l) if l.count > 0 => {
                    let end = l.out_first + (l.count - 1) * l.step + 1;
                    let range = Slice::new(l.out_first as isize, Some(end as isize), l.step as isize);
                    let part = B::float_slice(grad.clone(), &along(range, &out_shape));
                    let target = along(Slice::from(l.in_first..l.in_first + l.count), &shape);
                    acc = B::float_slice_assign(acc, &target, part);
                }
                // Nothing kept: the gradient is zero.
                Axis::Strided(_) => {}
            }
            grad = acc;
        }
        grad
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgpu_pad::{DataType, PadRequest};

    /// Each output position's source, rebuilt from the runs, is the plan's own.
    fn sources_from_runs(axis: &AxisMap, mode: Mode) -> Vec<Option<usize>> {
        let mut out = vec![None; axis.out_len];
        for r in runs(axis, mode) {
            for k in 0..r.len {
                let s = match r.step {
                    1 => r.in_start + k,
                    -1 => r.in_start + r.len - 1 - k,
                    _ => r.in_start,
                };
                assert!(
                    out[r.out_start + k].replace(s).is_none(),
                    "{mode} {axis:?}: output {} in two runs",
                    r.out_start + k
                );
            }
        }
        out
    }

    #[test]
    fn runs_cover_every_output_once_with_its_source() {
        for mode in [Mode::Constant, Mode::Reflect, Mode::Edge, Mode::Wrap, Mode::Symmetric] {
            for n in [1usize, 2, 3, 5] {
                for (b, e) in [(0i64, 0i64), (1, 2), (4, 7), (-1, 3), (2, -1), (11, 0), (0, 9)] {
                    let request = PadRequest::from_pairs(&[(b, e)]).mode(mode);
                    let Ok(plan) = wgpu_pad::PadPlan::new(DataType::Float32, &[n], &request) else { continue };
                    let axis = plan.axes()[0];
                    let want: Vec<Option<usize>> = (0..axis.out_len).map(|o| axis.source(mode, o)).collect();
                    assert_eq!(sources_from_runs(&axis, mode), want, "{mode} n={n} pads=({b},{e})");
                }
            }
        }
    }

    /// Interior padding's adjoint in Burn's ops (what runs where the kernel refused the
    /// gradient): the output gradient's strided slice placed among zeros, bit for bit
    /// `cpu::pad_backward`, crops into the dilation included. On Burn's wgpu device; skipped
    /// without an adapter unless `WGPU_PAD_REQUIRE_GPU` is set.
    #[test]
    fn the_strided_adjoint_is_the_cores() {
        use burn::backend::{BackendTensor, Cube, DispatchKindConversion, DispatchTensor};
        use burn::tensor::{Device, Tensor, TensorData};
        let instance = burn::backend::wgpu::wgpu::Instance::default();
        if pollster::block_on(instance.request_adapter(&Default::default())).is_err() {
            assert!(std::env::var_os("WGPU_PAD_REQUIRE_GPU").is_none(), "WGPU_PAD_REQUIRE_GPU is set and no adapter");
            return;
        }
        let device = Device::wgpu_options().init().expect("Burn's wgpu device");
        let request = PadRequest::from_padding_config(&[(-1, 2, 1), (1, -2, 2)]);
        let plan = PadPlan::new(DataType::Float32, &[3, 4], &request).unwrap();
        let out = [plan.out_shape()[0], plan.out_shape()[1]];
        let w: Vec<f32> = (0..out[0] * out[1]).map(|i| i as f32 * 0.5 - 7.0).collect();
        let grad = Tensor::<2>::from_data(TensorData::new(w.clone(), out), &device);
        let primitive = crate::kinds::on_cube(grad.into_dispatch()).unwrap();
        let adjoint = Adjoint::of(&plan);
        assert!(adjoint.axes.iter().all(|a| matches!(a, Some(Axis::Strided(_)))), "{adjoint:?}");
        let got = adjoint.apply::<Cube>(primitive);
        let got = <DispatchTensor as DispatchKindConversion<Cube>>::from_backend(BackendTensor::Float(got));
        let got = Tensor::<2>::from_dispatch(got).into_data();
        let grad_out = wgpu_pad::Tensor::from_slice(DataType::Float32, out.to_vec(), &w).unwrap();
        let want = wgpu_pad::cpu::pad_backward(&plan, &grad_out).unwrap();
        assert_eq!(got.as_bytes(), want.bytes().unwrap());
    }

    #[test]
    fn runs_split_at_the_borders_and_turns() {
        let request = PadRequest::from_pairs(&[(2, 5)]).mode(Mode::Reflect);
        let plan = wgpu_pad::PadPlan::new(DataType::Float32, &[3], &request).unwrap();
        // [1 2 | 0 1 2 | 1 0 1 2 1]: the border before reversed, the border after turning at
        // each end, then the kept inputs.
        let want = [
            Run { out_start: 0, len: 2, in_start: 1, step: -1 },
            Run { out_start: 5, len: 2, in_start: 0, step: -1 },
            Run { out_start: 7, len: 2, in_start: 1, step: 1 },
            Run { out_start: 9, len: 1, in_start: 1, step: 1 },
            Run { out_start: 2, len: 3, in_start: 0, step: 1 },
        ];
        assert_eq!(runs(&plan.axes()[0], Mode::Reflect), want);
        let request = PadRequest::from_pairs(&[(3, 1)]).mode(Mode::Edge);
        let plan = wgpu_pad::PadPlan::new(DataType::Float32, &[4], &request).unwrap();
        let want = [
            Run { out_start: 0, len: 3, in_start: 0, step: 0 },
            Run { out_start: 7, len: 1, in_start: 3, step: 1 },
            Run { out_start: 3, len: 4, in_start: 0, step: 1 },
        ];
        assert_eq!(runs(&plan.axes()[0], Mode::Edge), want);
    }
}
