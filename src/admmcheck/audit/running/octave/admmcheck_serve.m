function admmcheck_serve (answer_file)
  % admmcheck's side of an Octave audit worker (admmcheck.audit.running.octave): requests come on stdin,
  % one text line each (a packed value in base64 where the request carries one; input() reads
  % a line as soon as it arrives, where fgetl and fread on a pipe wait for a full buffer); every answer
  % goes to ANSWER_FILE (a pipe) as a uint64 length and that many bytes: 'o' and a packed value,
  % or 'e' and a one-line error message. What the audited code prints goes to stdout, which
  % admmcheck never reads.
  answers = fopen (answer_file, "w");
  if (answers < 0)
    error ("admmcheck: cannot open the answer pipe %s", answer_file);
  end
  datasets = {};
  while (true)
    try
      line = input ("", "s");
    catch
      break;  % admmcheck closed the requests: the worker is done
    end
    spaces = [find(line == " "), numel(line) + 1];  % find and sscanf: strsplit took 0.2 ms a request
    argument = line(spaces(1) + 1:end);
    try
      switch (line(1:spaces(1) - 1))
        case "source"   % source BASE64: a script file that defines functions
          source (char (matlab.net.base64decode (argument)));
          answer (answers, "o", admmcheck_pack (true));
        case "path"     % path BASE64: a folder to put first on the path
          addpath (char (matlab.net.base64decode (argument)));
          answer (answers, "o", admmcheck_pack (true));
        case "exist"    % exist NAME: 2 for a file on the path, 103 for a command-line function
          answer (answers, "o", admmcheck_pack (exist (argument)));
        case "which"    % which NAME: the file Octave would call NAME from ('' for a built-in)
          answer (answers, "o", admmcheck_pack (which (argument)));
        case "data"     % data K BASE64: a packed value, dataset K of later calls
          k = str2double (line(spaces(1) + 1:spaces(2) - 1));
          datasets{k} = admmcheck_unpack (matlab.net.base64decode (line(spaces(2) + 1:end)));
          answer (answers, "o", admmcheck_pack (true));
        case {"call", "batch"}  % call NAME K NARGOUT SEEDS... / batch NAME K N SEEDS...
          name = line(spaces(1) + 1:spaces(2) - 1);
          numbers = sscanf (line(spaces(2) + 1:end), "%f")';
          k = numbers(1);
          count = numbers(2);
          seed_generators (numbers(3:end));
          if (line(1) == "b")
            result = {feval(name, datasets{k}, count)};
          else
            result = cell (1, count);
            if (k == 0)
              [result{:}] = feval (name);
            else
              [result{:}] = feval (name, datasets{k});
            end
          end
          answer (answers, "o", admmcheck_pack (result));
        otherwise
          error ("admmcheck: unknown request %s", line(1:spaces(1) - 1));
      end
    catch err
      answer (answers, "e", uint8 (one_line (err)));
    end
  end
  fclose (answers);
end

function seed_generators (seeds)
  % Every generator the audited code can draw from gets its own state from the sample's seed:
  % rand (and randi, randperm, which draw from it), randn, rande, randg, randp.
  if (numel (seeds) == 20)
    rand ("state", seeds(1:4));
    randn ("state", seeds(5:8));
    rande ("state", seeds(9:12));
    randg ("state", seeds(13:16));
    randp ("state", seeds(17:20));
  end
end

function answer (answers, status, body)
  fwrite (answers, typecast (uint64 (numel (body) + 1), "uint8"), "uint8");
  fwrite (answers, [uint8(status), body], "uint8");
  fflush (answers);
end

function text = one_line (err)
  text = err.message;
  if (! isempty (err.stack))
    text = sprintf ("%s (in %s at line %d)", text, err.stack(1).name, err.stack(1).line);
  end
  text = regexprep (text, '\s+', " ");
end
