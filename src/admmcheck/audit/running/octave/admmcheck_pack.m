function bytes = admmcheck_pack (value)
  % VALUE as bytes for admmcheck (read by admmcheck.audit.running.octave.codec.unpack): a tag, the
  % dimensions (a uint8 count, then uint64 each), then the elements in column-major order.
  persistent tags = struct ("double", "D", "single", "S", "int8", "b", "uint8", "B", "int16", "h", "uint16", "H",
                            "int32", "i", "uint32", "I", "int64", "q", "uint64", "Q");
  if (isa (value, "double") && isreal (value) && ! issparse (value))  % the common case first
    bytes = [uint8("D"), dims(value), typecast(value(:)', "uint8")];
  elseif (iscell (value))
    parts = cell (1, numel (value));
    for k = 1:numel (value)
      parts{k} = admmcheck_pack (value{k});
    end
    bytes = [uint8("c"), dims(value), parts{:}];
  elseif (isstruct (value))
    names = fieldnames (value);
    head = [uint8("s"), dims(value), typecast(uint32(numel (names)), "uint8")];
    for f = 1:numel (names)
      head = [head, typecast(uint32(numel (names{f})), "uint8"), uint8(names{f})];
    end
    parts = cell (1, numel (value) * numel (names));
    j = 0;
    for k = 1:numel (value)
      for f = 1:numel (names)
        j = j + 1;
        parts{j} = admmcheck_pack (value(k).(names{f}));
      end
    end
    bytes = [head, parts{:}];
  elseif (ischar (value))
    bytes = [uint8("C"), dims(value), uint8(value(:)')];
  elseif (islogical (value))
    bytes = [uint8("L"), dims(value), uint8(value(:)')];
  elseif (isnumeric (value))
    if (issparse (value))
      value = full (value);
    end
    if (iscomplex (value))
      if (! isa (value, "double"))
        value = double (value);
      end
      bytes = [uint8("Z"), dims(value), typecast(real (value(:))', "uint8"), typecast(imag (value(:))', "uint8")];
    else
      bytes = [uint8(tags.(class (value))), dims(value), typecast(value(:)', "uint8")];
    end
  else
    error ("admmcheck:output", "admmcheck cannot read a value of class %s; return numbers, logicals, text, structs or cell arrays",
           class (value));
  end
end

function d = dims (value)
  s = size (value);
  d = [uint8(numel (s)), typecast(uint64 (s), "uint8")];
end
