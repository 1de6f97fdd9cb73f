//! Where a solver runs and what that decides: the backend ([`Target`]) and
//! the Galerkin-product variant a `variant` option names for it (one rule for
//! every driver).
use crate::Error;
use ptap_cuda::{device_candidates, Device, DeviceOptions};
use ptap_runtime::HierarchyOptions;
use ptap_schedules::Variant;
use std::sync::Arc;

/// Where the hierarchy lives.
#[derive(Clone)]
pub enum Target {
    Cpu,
    Cuda(Arc<Device>),
}

/// Which device a user asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The host, with rayon's threads.
    #[default]
    Cpu,
    /// The first NVIDIA GPU; an error of one sentence when there is none.
    Cuda,
    /// The GPU when one is usable, else the CPU.
    Auto,
}

impl std::str::FromStr for DeviceChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.to_ascii_lowercase().as_str() {
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" | "gpu" => Ok(DeviceChoice::Cuda),
            "auto" => Ok(DeviceChoice::Auto),
            _ => Err(Error::input(format!("the device must be cpu, cuda or auto, got {s:?}"))),
        }
    }
}

impl Target {
    /// Opens what `choice` asks for. With `Auto`, the second value says why the
    /// CPU was chosen when no GPU could be opened.
    pub fn open(choice: DeviceChoice, options: DeviceOptions) -> Result<(Target, Option<String>), Error> {
        match choice {
            DeviceChoice::Cpu => Ok((Target::Cpu, None)),
            DeviceChoice::Cuda => Ok((Target::Cuda(Device::open(options)?), None)),
            DeviceChoice::Auto => match Device::open(options) {
                Ok(d) => Ok((Target::Cuda(d), None)),
                Err(e) => Ok((Target::Cpu, Some(e.to_string()))),
            },
        }
    }

    /// The product a backend runs when none is asked for: two-pass on the
    /// CPU, the symmetric tensor pair on a GPU (column split's schedule where
    /// the device has no FP64 MMA or the blocks pass 8x8;
    /// `ptap_cuda::DEVICE_VARIANTS` says why). The solver's operators are
    /// symmetric (its front door checks them), which the symmetric pair needs.
    pub fn default_variant(&self) -> Variant {
        match self {
            Target::Cpu => Variant::TwoPass,
            Target::Cuda(_) => Self::DEVICE_DEFAULT_VARIANT,
        }
    }

    /// [`Self::default_variant`] on a GPU (also what `ptap bench`'s device
    /// solve runs): faster than the tensor pair on every level of the beam
    /// (H200, k = 16, pf 0.03: 4.82 / 0.705 / 0.139 ms against 5.46 / 1.015 /
    /// 0.201; `benches/results/h200-2026-11-25-products-ledger.md`).
    pub const DEVICE_DEFAULT_VARIANT: Variant = Variant::TensorPairSym;

    /// `cpu`, or the GPU's name.
    pub fn name(&self) -> String {
        match self {
            Target::Cpu => "cpu".into(),
            Target::Cuda(d) => d.name().to_string(),
        }
    }
}

/// Sets `opts`'s product choice for `target` from a variant name (`None` =
/// the target's default; `auto` = the traffic model's pick per level for the
/// machine at hand, measured: the host by default, a GPU through
/// `Device::machine_params`, among the variants it runs). Returns the name the
/// reports print.
pub fn product_options(opts: &mut HierarchyOptions, target: &Target, variant: Option<&str>) -> Result<String, Error> {
    match variant {
        Some(v) if v.eq_ignore_ascii_case("auto") => {
            opts.variant = None;
            if let Target::Cuda(dev) = target {
                opts.machine = Some(dev.machine_params()?);
                opts.candidates = device_candidates(dev);
            }
            Ok("auto".into())
        }
        Some(v) => {
            let parsed: Variant = v.parse().map_err(|e: String| Error::input(format!("--variant: {e}")))?;
            opts.variant = Some(parsed);
            Ok(parsed.name().into())
        }
        None => {
            let v = target.default_variant();
            opts.variant = Some(v);
            Ok(v.name().into())
        }
    }
}
