//! A rank's slab assembled on the GPU ([`DeviceSlabAssembler`]) against the
//! host's [`BeamSlab`]: compiled with `--fmad=false` the device gather adds
//! the same products in the same (colour) order as the host, so the values
//! must be equal bit for bit, for 1, 2 and 3 slabs, the uniform modulus and
//! two steps of the stiffening front, the plain and the twice longer beam.
//! Only the slab's modulus part crosses the bus. Skips with a visible line
//! without a CUDA driver.
#![cfg(feature = "cuda")]
use ptap_cuda::{Device, DeviceOptions};
use ptap_fem::device::DeviceSlabAssembler;
use ptap_fem::{stiffening_front, BeamSlab, POISSON_RATIO};

fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn device_slabs_are_the_host_slabs_bit_for_bit() {
    let dev = match Device::open(DeviceOptions {
        fmad: false,
        ..Default::default()
    }) {
        Ok(d) => d,
        Err(e) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "skipping: {e}");
            return;
        }
    };
    let mut checked = 0;
    for (k, length) in [(1, 1), (2, 1), (2, 2), (3, 1)] {
        let n = ptap_fem::beam_mesh(k, length).unwrap().n_nodes() - (2 * k + 1) * (2 * k + 1);
        for ranks in [1, 2, 3] {
            for r in 0..ranks {
                let rows = r * n / ranks..(r + 1) * n / ranks;
                let mut slab = BeamSlab::build_long(k, length, rows.clone()).unwrap();
                let mut dasm = DeviceSlabAssembler::new(&dev, &slab, POISSON_RATIO).unwrap();
                assert_eq!(dasm.values_len(), slab.values().len());
                let mut values = dev.zeros::<f64>(dasm.values_len().max(1)).unwrap();
                for step in [1, 2, 3] {
                    let field = stiffening_front(&slab.mesh, step, 3);
                    slab.assemble(&field).unwrap();
                    dev.reset_counters();
                    dev.set_phase("assembly");
                    dasm.assemble(&field, &mut values).unwrap();
                    dev.synchronize().unwrap();
                    let t = dev.counters().get("assembly");
                    dev.set_phase("check");
                    let what = format!("k {k} length {length}, rank {r} of {ranks}, rows {rows:?}, step {step}");
                    assert_eq!(t.h2d_bytes, 8 * dasm.elements() as u64, "{what}");
                    assert_eq!(t.d2h_bytes, 0, "{what}");
                    let mut got = dev.download(&values).unwrap();
                    got.truncate(slab.values().len());
                    assert_eq!(bits(&got), bits(slab.values()), "{what}");
                    checked += got.len();
                }
                // A field of the wrong length is refused before any launch.
                assert!(dasm.assemble(&[1.0; 3], &mut values).is_err());
            }
        }
    }
    assert!(checked > 0);
}
