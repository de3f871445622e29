function out = laplace_half (data)
  % Broken: Laplace(1/2) for sensitivity 1 claims epsilon = 1; its true epsilon is 2.
  u = rand () - 0.5;
  out = sum (data) - 0.5 * sign (u) * log (1 - 2 * abs (u));
end
