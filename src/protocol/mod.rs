//! Wire types of the agent protocol (DESIGN §7), shared by the server and `gpuex-agent`.
