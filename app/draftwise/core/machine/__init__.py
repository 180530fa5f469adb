"""What this computer has (memory, GPUs, backends), the other computers whose memory it
borrows (workers.py), and the memory it lends them (share.py: the RPC worker)."""
