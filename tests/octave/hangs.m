function out = hangs (data)
  % Never returns.
  while (true)
  end
end
