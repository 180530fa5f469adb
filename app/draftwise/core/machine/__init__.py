"""What this computer has: memory, GPUs, backends, cores, and how fast it decodes. The
other computers whose memory it borrows, and the memory it lends them, are core/rpc."""
