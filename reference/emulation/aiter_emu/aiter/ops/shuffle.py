"""aiter.ops.shuffle.shuffle_weight: the (16, 16) weight preshuffle (aiter_semantics.md section 3)."""
import torch

from ..utility import dtypes


def shuffle_weight(x: torch.Tensor, layout=(16, 16), use_int4=False) -> torch.Tensor:
    """Each ``layout[0]``-row block of x is stored as consecutive [layout[0], 16-byte] tiles, one per
    16 bytes of K, so a tile row is one 16-byte vector. Same shape and dtype; works on any viewable x."""
    original_dtype = x.dtype
    if original_dtype == dtypes.fp4x2:
        x = x.view(torch.uint8)
    tile_rows, tile_k = layout
    k_block = 2 * tile_k
    k_vector = 32 if use_int4 else 16 // x.element_size()  # elements per 16-byte vector
    rows, cols = x.shape[-2], x.shape[-1]
    assert rows % tile_rows == 0, f"{rows} % {tile_rows} == {rows % tile_rows}"
    assert cols % k_block == 0, f"{cols} % {k_block} == {cols % k_block}"
    tiles = x.view(-1, rows // tile_rows, tile_rows, cols // k_block, k_block // k_vector, k_vector)
    shuffled = tiles.permute(0, 1, 3, 4, 2, 5).contiguous().view(*x.shape).view(original_dtype)
    shuffled.is_shuffled = True
    return shuffled
