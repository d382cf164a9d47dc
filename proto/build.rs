//! Generates the service code from `solve2048.proto` with protox, a pure-Rust
//! protobuf compiler, so building needs no system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=solve2048.proto");
    let descriptors = protox::compile(["solve2048.proto"], ["."])?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
