function rows = laplace_vec_batch (data, n)
  % The vectorised form of laplace_vec.m: n independent releases, one per row.
  rows = sum (data) + (rande (n, 1) - rande (n, 1));
end
