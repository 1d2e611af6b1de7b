use oxla::{Array, DType, jit, make_jaxpr, numpy as jnp};
fn main() -> oxla::Result<()> {
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    let y = &x * 2.0 + 1.0;
    println!("{y}");
    let w = Array::from_slice(&[0.5f32; 12], &[3, 4])?;
    let f = |(x, w): (Array, Array)| jnp::sum(&jnp::tanh(&jnp::matmul(&x, &w)), Some(&[1]), false);
    println!("{}", make_jaxpr(f, &(x.clone(), w.clone()))?);
    let jf = jit(f);
    let out = jf.call((x.clone(), w.clone()))?;
    println!("{out} cache {}", jf.cache_size());
    let out = jf.call((x.clone(), w.clone()))?;
    println!("{out} cache {}", jf.cache_size());
    let bad = &x + &w;
    println!("{:?}", bad.check().err());
    let g = jit(|x: Array| -> oxla::Result<Array> {
        let _ = x.to_vec::<f32>()?;
        Ok(x)
    });
    println!("{:?}", g.call(Array::scalar(1.0f32)?).err());
    println!("{}", jnp::arange(0.0, 5.0, 1.0, DType::F32));
    println!("{}", jf.lower(&(x, w))?);
    Ok(())
}
