/**
 * Moves a box's bound outward past float32 rounding. The R*Tree keeps float32 boxes rounded outward, except for
 * values below float32's normal range, which it may round toward zero (1e-40 is stored as 9.99994e-41): a point's
 * true doubles lie within its tree box widened this way, and a query box widened this way finds every tree box that
 * may hold one of its points.
 */
export function widen(v: number, dir: 1 | -1): number {
  return v + dir * (Math.abs(v) * 2 ** -20 + 1e-37);
}
