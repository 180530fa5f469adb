"""Other computers: llama.cpp's RPC workers (docs/rpc.md).

The workers this computer borrows memory from — found and asked what they offer
(`workers`), their link measured (`link`) and their compute rate (`worker_rate`), both through
the RPC protocol itself (`wire`); the speed of a model split with them (`split_speed`) and the
first upload of their weights (`upload`) — and this computer lent as a worker (`share`: the
`ggml-rpc-server` the "Share this computer" switch runs).

Above core/machine (this computer's own memory, GPUs and speed, which the split adds to),
below core/launch (which plans and starts an engine over the workers)."""
