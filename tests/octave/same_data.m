function [d0, d1] = same_data ()
  % A "pair" of equal datasets: a mechanism that re-seeds itself gives one output on both.
  d0 = [0; 0.5; 0.25];
  d1 = [0; 0.5; 0.25];
end
