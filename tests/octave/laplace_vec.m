function out = laplace_vec (data)
  % Correct, with a vectorised form (laplace_vec_batch.m): the sum of the records (each in [0, 1]:
  % sensitivity 1) plus Laplace(1) as the difference of two exponentials; epsilon = 1.
  out = sum (data) + (rande () - rande ());
end
