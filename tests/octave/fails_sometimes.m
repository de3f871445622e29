function out = fails_sometimes (data)
  % Fails on about one call in ten.
  if (rand () < 0.1)
    error ("step size is not positive");
  end
  out = sum (data) + randn ();
end
