//! Generates the CRI v1 client (and the server trait the tests' fake runtime implements) from the
//! vendored `proto/cri-api/v1/api.proto`. protox compiles the proto in Rust, so building needs no
//! `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/cri-api/v1/api.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto/cri-api/v1"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // The tests' fake runtime implements only the calls the agent makes.
        .generate_default_stubs(true)
        .compile_fds(descriptors)?;
    Ok(())
}
