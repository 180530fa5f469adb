"""What this computer has: memory, GPUs, backends."""
