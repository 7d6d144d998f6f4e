//! The tensor kinds' pads ([`PadKind`]): int and bool tensors on Burn's `Cube` backend as
//! they are (autodiff tracks floats only), float tensors the same or, under Burn's autodiff,
//! with their backward.

use burn::backend::{
    BackendTensor, BackendTypes, Cube, DispatchAutodiffContext, DispatchKindConversion, DispatchTensor,
};

use crate::backend::{PadBackend, Work};
use crate::{BurnPad, Error, PadKind, PlanOf};

/// A tensor as Burn's `Cube` backend holds it: Burn's concrete tensor, however it dispatches.
pub(crate) fn on_cube(tensor: DispatchTensor) -> Result<CubePrimitive, Error> {
    match <DispatchTensor as DispatchKindConversion<Cube>>::try_into_backend(tensor) {
        Ok(BackendTensor::Float(t) | BackendTensor::Int(t) | BackendTensor::Bool(t)) => Ok(t),
        Ok(BackendTensor::Quantized(_)) => Err(Error::NotWgpu("a quantized tensor".into())),
        #[allow(unreachable_patterns)] // Burn's autodiff variant exists only in some builds
        Ok(other) => Err(Error::NotWgpu(format!("a {} tensor", other.name()))),
        Err(e) => Err(Error::NotWgpu(e)),
    }
}

/// The primitive of every tensor kind on Burn's `Cube` backend.
pub(crate) type CubePrimitive = <Cube as BackendTypes>::FloatTensorPrimitive;

/// Int and bool tensors: Burn's concrete tensor, also under autodiff (which tracks floats
/// only: an int or bool tensor there is the inner backend's, passed through).
fn pad_untracked(
    pad: &BurnPad,
    tensor: DispatchTensor,
    plan_of: PlanOf,
    wrap: fn(CubePrimitive) -> BackendTensor<Cube>,
) -> Result<DispatchTensor, Error> {
    let context = tensor.autodiff;
    let mut untracked = tensor;
    untracked.autodiff = DispatchAutodiffContext::Disabled;
    let tensor = on_cube(untracked)?;
    let plan = pad.plan_for::<Cube>(&tensor, plan_of)?;
    let padded = <Cube as PadBackend>::pad_planned(&pad.shared, tensor, plan, Work::Pad)?;
    let mut out = <DispatchTensor as DispatchKindConversion<Cube>>::from_backend(wrap(padded));
    out.autodiff = context;
    Ok(out)
}

impl PadKind for burn::tensor::Int {
    fn pad_dispatch(pad: &BurnPad, tensor: DispatchTensor, plan_of: PlanOf) -> Result<DispatchTensor, Error> {
        pad_untracked(pad, tensor, plan_of, BackendTensor::Int)
    }
}

impl PadKind for burn::tensor::Bool {
    fn pad_dispatch(pad: &BurnPad, tensor: DispatchTensor, plan_of: PlanOf) -> Result<DispatchTensor, Error> {
        pad_untracked(pad, tensor, plan_of, BackendTensor::Bool)
    }
}

impl PadKind for burn::tensor::Float {
    fn pad_dispatch(pad: &BurnPad, tensor: DispatchTensor, plan_of: PlanOf) -> Result<DispatchTensor, Error> {
        match tensor.autodiff {
            DispatchAutodiffContext::Disabled => pad_untracked(pad, tensor, plan_of, BackendTensor::Float),
            #[cfg(feature = "autodiff")]
            DispatchAutodiffContext::Enabled(strategy) => tracked::pad(pad, tensor, plan_of, strategy),
            #[cfg(not(feature = "autodiff"))]
            DispatchAutodiffContext::Enabled(_) => Err(Error::NotWgpu(
                "a float tensor Burn's autodiff tracks: its pad needs a backward, wgpu-pad-burn's `autodiff` feature"
                    .into(),
            )),
        }
    }
}

/// Float tensors under Burn's autodiff: the pad on the inner backend, with its backward.
#[cfg(feature = "autodiff")]
mod tracked {
    use super::*;
    use burn::backend::autodiff::checkpoint::base::Checkpointer;
    use burn::backend::autodiff::checkpoint::strategy::{BalancedCheckpointing, CheckpointStrategy, NoCheckpointing};
    use burn::backend::autodiff::grads::Gradients;
    use burn::backend::autodiff::ops::{unary, Backward, Ops, OpsKind};
    use burn::backend::{Autodiff, GradientCheckpointingStrategy};

    use std::sync::Arc;

    use crate::backward::Adjoint;
    use crate::Shared;

    #[derive(Debug)]
    struct PadBackward;

    /// What the backward keeps of a pad: its plan, the kernel to run its gradient on, and
    /// the same gradient in Burn's ops where the kernel does not take it.
    #[derive(Clone)]
    struct Gradient {
        shared: Arc<Shared>,
        plan: wgpu_pad::PadPlan,
        adjoint: Adjoint,
    }

    impl std::fmt::Debug for Gradient {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Gradient").field("plan", &self.plan).finish_non_exhaustive()
        }
    }

    impl Backward<Cube, 1> for PadBackward {
        type State = Gradient;

        /// float32 and float16 on the kernel (one dispatch, in the fusion stream with fusion, the
        /// order `wgpu_pad::adjoint` documents, so its bits are the core's on every run); what
        /// the kernel refuses (sums past a lane's bound, float64), in Burn's ops in the same
        /// order.
        fn backward(self, ops: Ops<Gradient, 1>, grads: &mut Gradients, _checkpointer: &mut Checkpointer) {
            let state = ops.state;
            unary::<Cube, _>(ops.parents, ops.node, grads, |grad| {
                if state.shared.kernel.check_backward(&state.plan).is_ok() {
                    let planned = <Cube as PadBackend>::pad_planned(
                        &state.shared,
                        grad.clone(),
                        state.plan.clone(),
                        Work::Gradient,
                    );
                    if let Ok(g) = planned {
                        return g;
                    }
                }
                state.adjoint.apply::<Cube>(grad)
            });
        }
    }

    pub(super) fn pad(
        pad: &BurnPad,
        tensor: DispatchTensor,
        plan_of: PlanOf,
        strategy: GradientCheckpointingStrategy,
    ) -> Result<DispatchTensor, Error> {
        match strategy {
            GradientCheckpointingStrategy::Disabled => pad_with::<NoCheckpointing>(pad, tensor, plan_of),
            GradientCheckpointingStrategy::Balanced => pad_with::<BalancedCheckpointing>(pad, tensor, plan_of),
        }
    }

    fn pad_with<C: CheckpointStrategy>(
        pad: &BurnPad,
        tensor: DispatchTensor,
        plan_of: PlanOf,
    ) -> Result<DispatchTensor, Error>
    where
        DispatchTensor: DispatchKindConversion<Autodiff<Cube, C>>,
    {
        let tensor = match <DispatchTensor as DispatchKindConversion<Autodiff<Cube, C>>>::try_into_backend(tensor) {
            Ok(BackendTensor::Float(t)) => t,
            Ok(other) => {
                return Err(Error::NotWgpu(format!("a {} tensor where a tracked float was expected", other.name())))
            }
            Err(e) => return Err(Error::NotWgpu(e)),
        };
        let plan = pad.plan_for::<Cube>(tensor.primitive(), plan_of)?;
        let gradient = Gradient { shared: Arc::clone(&pad.shared), adjoint: Adjoint::of(&plan), plan: plan.clone() };
        let padded = <Cube as PadBackend>::pad_planned(&pad.shared, tensor.primitive().clone(), plan, Work::Pad)?;
        let out = match PadBackward.prepare::<C>([tensor.node()]).compute_bound().stateful() {
            OpsKind::Tracked(prep) => prep.finish(gradient, padded),
            OpsKind::UnTracked(prep) => prep.finish(padded),
        };
        Ok(<DispatchTensor as DispatchKindConversion<Autodiff<Cube, C>>>::from_backend(BackendTensor::Float(out)))
    }
}
