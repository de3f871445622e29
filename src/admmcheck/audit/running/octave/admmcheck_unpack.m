function [value, at] = admmcheck_unpack (bytes, at)
  % The value admmcheck.audit.running.octave.codec.pack wrote into BYTES (a uint8 row) from position AT
  % (default 1), in the layout of admmcheck_pack; AT comes back just after it.
  if (nargin < 2)
    at = 1;
  end
  tag = char (bytes(at));
  count = double (bytes(at + 1));
  d = double (typecast (bytes(at + 2:at + 1 + 8 * count), "uint64"));
  at = at + 2 + 8 * count;
  n = prod (d);
  switch (tag)
    case "c"
      value = cell (d);
      for k = 1:n
        [value{k}, at] = admmcheck_unpack (bytes, at);
      end
    case "s"
      fields = double (typecast (bytes(at:at + 3), "uint32"));
      at = at + 4;
      names = cell (1, fields);
      for f = 1:fields
        size = double (typecast (bytes(at:at + 3), "uint32"));
        names{f} = char (bytes(at + 4:at + 3 + size));
        at = at + 4 + size;
      end
      if (fields == 0)
        value = repmat (struct (), d);
      else
        value = reshape (cell2struct (cell (fields, n), names, 1), d);
      end
      for k = 1:n
        for f = 1:fields
          [value(k).(names{f}), at] = admmcheck_unpack (bytes, at);
        end
      end
    case "C"
      value = reshape (char (bytes(at:at + n - 1)), d);
      at = at + n;
    case "L"
      value = reshape (logical (bytes(at:at + n - 1)), d);
      at = at + n;
    case "Z"
      parts = typecast (bytes(at:at + 16 * n - 1), "double");
      value = reshape (complex (parts(1:n), parts(n + 1:end)), d);
      at = at + 16 * n;
    otherwise
      classes = struct ("D", "double", "S", "single", "b", "int8", "B", "uint8", "h", "int16", "H", "uint16", ...
                        "i", "int32", "I", "uint32", "q", "int64", "Q", "uint64");
      kind = classes.(tag);
      width = numel (typecast (zeros (1, 1, kind), "uint8"));
      value = reshape (typecast (bytes(at:at + width * n - 1), kind), d);
      at = at + width * n;
  end
end
