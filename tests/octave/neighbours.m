function [d0, d1] = neighbours ()
  % Two datasets of records in [0, 1] that differ in record 1.
  d0 = [0; 0.5; 0.25];
  d1 = [1; 0.5; 0.25];
end
