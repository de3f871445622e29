function out = laplace (data)
  % Correct: the sum of the records (each in [0, 1]: sensitivity 1) plus Laplace(1) drawn by
  % inverting the CDF of rand, as MATLAB code does; epsilon = 1.
  u = rand () - 0.5;
  out = sum (data) - sign (u) * log (1 - 2 * abs (u));
end
