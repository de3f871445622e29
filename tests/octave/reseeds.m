function out = reseeds (data)
  % Seeds its own generator at the top, as experiment scripts do: Laplace(1) noise drawn with rand
  % after rng(1) is the same number in every call, so the release is sum(data) plus a constant.
  rng (1);
  u = rand () - 0.5;
  out = sum (data) - sign (u) * log (1 - 2 * abs (u));
end
