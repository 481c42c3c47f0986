/** Word lists and the product catalogue the world generator draws from (our own, not tau-bench's). */

export const FIRST_NAMES: readonly string[] = [
  'Aaliyah', 'Aarav', 'Abigail', 'Adam', 'Adrian', 'Aisha', 'Alejandro', 'Alice', 'Amara', 'Amir',
  'Ana', 'Andre', 'Arjun', 'Astrid', 'Beatriz', 'Benjamin', 'Bianca', 'Caleb', 'Camila', 'Carlos',
  'Chen', 'Chloe', 'Daniel', 'Dmitri', 'Elena', 'Elif', 'Emeka', 'Emma', 'Ethan', 'Fatima',
  'Felix', 'Gabriel', 'Grace', 'Hana', 'Hassan', 'Ines', 'Isaac', 'Ivy', 'Jamal', 'Jasmine',
  'Javier', 'Ji-woo', 'Jonas', 'Julia', 'Kai', 'Keanu', 'Kenji', 'Lara', 'Leila', 'Leo',
  'Lucas', 'Maya', 'Mateo', 'Mei', 'Mila', 'Nadia', 'Naomi', 'Nikhil', 'Nina', 'Noor',
  'Oliver', 'Omari', 'Oscar', 'Priya', 'Rafael', 'Rosa', 'Ruby', 'Samuel', 'Santiago', 'Sara',
  'Sofia', 'Tariq', 'Theo', 'Valentina', 'Victor', 'Wei', 'Xavier', 'Yasmin', 'Yusuf', 'Zoe',
];

export const LAST_NAMES: readonly string[] = [
  'Abe', 'Adeyemi', 'Alvarez', 'Andersen', 'Bauer', 'Becker', 'Bennett', 'Castillo', 'Chavez', 'Cho',
  'Costa', 'Dubois', 'Edwards', 'Fischer', 'Flores', 'Foster', 'Garcia', 'Gupta', 'Hansen', 'Hayes',
  'Hughes', 'Ibrahim', 'Ivanova', 'Jensen', 'Kaur', 'Khan', 'Kim', 'Kowalski', 'Larsen', 'Lee',
  'Lopez', 'Mahmoud', 'Martin', 'Mendes', 'Morales', 'Murphy', 'Nakamura', 'Nguyen', 'Novak', 'Okafor',
  'Olsen', 'Ortiz', 'Park', 'Patel', 'Perez', 'Petrov', 'Quinn', 'Ramirez', 'Reyes', 'Rossi',
  'Said', 'Santos', 'Schmidt', 'Sharma', 'Silva', 'Singh', 'Sokolov', 'Suzuki', 'Tanaka', 'Torres',
  'Tran', 'Turner', 'Vargas', 'Walsh', 'Wang', 'Weber', 'Wilson', 'Wong', 'Yamamoto', 'Zhang',
];

export const STREETS: readonly string[] = [
  'Ash Court', 'Aspen Way', 'Bay Street', 'Birch Road', 'Cherry Lane', 'College Avenue', 'Cypress Drive',
  'Dogwood Court', 'Eighth Street', 'Forest Avenue', 'Franklin Street', 'Garden Way', 'Harbor View',
  'Jefferson Avenue', 'Juniper Drive', 'Lincoln Avenue', 'Magnolia Street', 'Meadow Lane', 'Mill Road',
  'North Street', 'Orchard Road', 'Poplar Avenue', 'Prospect Street', 'Quarry Road', 'Redwood Drive',
  'Ridge Road', 'School Street', 'Second Avenue', 'Sycamore Lane', 'Union Street', 'Valley Road',
  'Walnut Street', 'Washington Boulevard', 'Water Street', 'Woodland Avenue',
];

/** City, state, and the first three digits of its zip codes. */
export const CITIES: readonly (readonly [string, string, string])[] = [
  ['Albuquerque', 'NM', '871'], ['Atlanta', 'GA', '303'], ['Austin', 'TX', '787'], ['Baltimore', 'MD', '212'],
  ['Boise', 'ID', '837'], ['Boston', 'MA', '021'], ['Charlotte', 'NC', '282'], ['Chicago', 'IL', '606'],
  ['Cleveland', 'OH', '441'], ['Columbus', 'OH', '432'], ['Dallas', 'TX', '752'], ['Denver', 'CO', '802'],
  ['Detroit', 'MI', '482'], ['Honolulu', 'HI', '968'], ['Houston', 'TX', '770'], ['Indianapolis', 'IN', '462'],
  ['Kansas City', 'MO', '641'], ['Las Vegas', 'NV', '891'], ['Los Angeles', 'CA', '900'], ['Louisville', 'KY', '402'],
  ['Memphis', 'TN', '381'], ['Miami', 'FL', '331'], ['Milwaukee', 'WI', '532'], ['Minneapolis', 'MN', '554'],
  ['Nashville', 'TN', '372'], ['New Orleans', 'LA', '701'], ['New York', 'NY', '100'], ['Oakland', 'CA', '946'],
  ['Omaha', 'NE', '681'], ['Philadelphia', 'PA', '191'], ['Phoenix', 'AZ', '850'], ['Pittsburgh', 'PA', '152'],
  ['Portland', 'OR', '972'], ['Raleigh', 'NC', '276'], ['Sacramento', 'CA', '958'], ['Salt Lake City', 'UT', '841'],
  ['San Diego', 'CA', '921'], ['Seattle', 'WA', '981'], ['St. Louis', 'MO', '631'], ['Tampa', 'FL', '336'],
  ['Tucson', 'AZ', '857'], ['Washington', 'DC', '200'],
];

export const CARD_BRANDS: readonly string[] = ['visa', 'mastercard', 'visa', 'mastercard', 'amex', 'discover'];

/** A product type: option dimensions (each with its values) and a price band in cents. */
export interface ProductSpec {
  name: string;
  options: ReadonlyArray<readonly [string, readonly string[]]>;
  cents: readonly [number, number];
}

export const CATALOGUE: readonly ProductSpec[] = [
  { name: 'Air Fryer', options: [['capacity', ['3 qt', '5 qt', '8 qt']], ['color', ['black', 'white', 'red']], ['display', ['analog', 'digital']]], cents: [7900, 15900] },
  { name: 'Alarm Clock', options: [['display', ['LED', 'LCD', 'analog']], ['power source', ['battery', 'plug-in']], ['color', ['black', 'white', 'wood']]], cents: [1900, 4900] },
  { name: 'Baby Stroller', options: [['type', ['jogging', 'lightweight', 'travel system']], ['color', ['gray', 'navy', 'black']], ['canopy', ['standard', 'extended']]], cents: [19900, 64900] },
  { name: 'Bath Towel Set', options: [['material', ['cotton', 'bamboo', 'linen']], ['color', ['white', 'sage', 'charcoal', 'sand']], ['pieces', ['4', '6', '8']]], cents: [3900, 9900] },
  { name: 'Blender', options: [['power', ['600W', '1000W', '1500W']], ['jar material', ['glass', 'plastic']], ['color', ['black', 'silver', 'white']]], cents: [4900, 29900] },
  { name: 'Board Game', options: [['genre', ['strategy', 'party', 'cooperative', 'family']], ['players', ['2-4', '3-6', '2-8']], ['edition', ['standard', 'deluxe']]], cents: [1900, 7900] },
  { name: 'Camping Tent', options: [['capacity', ['2-person', '4-person', '6-person']], ['season', ['3-season', '4-season']], ['color', ['green', 'orange', 'blue']]], cents: [9900, 39900] },
  { name: 'Car Phone Mount', options: [['mount type', ['vent', 'dashboard', 'windshield']], ['charging', ['none', 'wireless']]], cents: [1500, 5900] },
  { name: 'Ceiling Fan', options: [['blade span', ['42 in', '52 in', '60 in']], ['finish', ['brushed nickel', 'matte black', 'bronze']], ['light', ['yes', 'no']]], cents: [8900, 34900] },
  { name: 'Chef Knife', options: [['blade length', ['6 in', '8 in', '10 in']], ['steel', ['German', 'Japanese', 'Damascus']], ['handle', ['wood', 'resin']]], cents: [3900, 24900] },
  { name: 'Cordless Drill', options: [['voltage', ['12V', '18V', '20V']], ['battery', ['1 battery', '2 batteries']], ['case', ['bag', 'hard case']]], cents: [6900, 24900] },
  { name: 'Desk Organizer', options: [['material', ['bamboo', 'metal mesh', 'acrylic']], ['compartments', ['3', '5', '7']]], cents: [1500, 4900] },
  { name: 'Dining Chair', options: [['material', ['oak', 'walnut', 'metal', 'plastic']], ['color', ['natural', 'black', 'white']], ['set', ['single', 'pair']]], cents: [7900, 39900] },
  { name: 'Dishwasher Pods', options: [['count', ['40', '80', '120']], ['scent', ['unscented', 'lemon', 'fresh']]], cents: [999, 3499] },
  { name: 'Drone', options: [['camera', ['1080p', '2.7K', '4K']], ['flight time', ['20 min', '30 min', '45 min']], ['controller', ['standard', 'with screen']]], cents: [14900, 129900] },
  { name: 'Duvet Cover', options: [['size', ['twin', 'queen', 'king']], ['material', ['cotton', 'linen', 'microfiber']], ['color', ['white', 'gray', 'blue', 'terracotta']]], cents: [3900, 14900] },
  { name: 'Electric Scooter', options: [['range', ['12 mi', '25 mi', '40 mi']], ['top speed', ['15 mph', '20 mph']], ['color', ['black', 'white']]], cents: [29900, 99900] },
  { name: 'Electric Shaver', options: [['type', ['foil', 'rotary']], ['wet/dry', ['yes', 'no']], ['color', ['black', 'silver', 'blue']]], cents: [3900, 24900] },
  { name: 'Film Camera', options: [['format', ['35mm', 'medium format', 'instant']], ['lens', ['fixed', 'interchangeable']], ['color', ['black', 'silver']]], cents: [6900, 59900] },
  { name: 'Fitness Tracker', options: [['band', ['silicone', 'fabric', 'leather']], ['color', ['black', 'pink', 'teal', 'white']], ['gps', ['yes', 'no']]], cents: [4900, 19900] },
  { name: 'Floor Lamp', options: [['style', ['arc', 'tripod', 'torchiere']], ['finish', ['brass', 'black', 'white']], ['bulb', ['LED included', 'no bulb']]], cents: [4900, 19900] },
  { name: 'Food Processor', options: [['capacity', ['7 cup', '11 cup', '14 cup']], ['color', ['white', 'black', 'silver']]], cents: [5900, 27900] },
  { name: 'Gaming Chair', options: [['material', ['PU leather', 'mesh', 'fabric']], ['color', ['black', 'red', 'blue', 'white']], ['footrest', ['yes', 'no']]], cents: [14900, 44900] },
  { name: 'Guitar', options: [['type', ['acoustic', 'electric', 'classical']], ['size', ['3/4', 'full']], ['finish', ['natural', 'sunburst', 'black']]], cents: [12900, 89900] },
  { name: 'Hair Dryer', options: [['power', ['1200W', '1875W', '2000W']], ['attachments', ['none', 'diffuser', 'full set']], ['color', ['black', 'rose', 'white']]], cents: [2900, 39900] },
  { name: 'Hammock', options: [['material', ['cotton rope', 'nylon', 'canvas']], ['capacity', ['single', 'double']], ['stand', ['included', 'not included']]], cents: [2900, 17900] },
  { name: 'Humidifier', options: [['tank size', ['2 L', '4 L', '6 L']], ['mist', ['cool', 'warm', 'both']], ['color', ['white', 'gray']]], cents: [2900, 14900] },
  { name: 'Ice Cream Maker', options: [['capacity', ['1 qt', '1.5 qt', '2 qt']], ['type', ['freezer bowl', 'compressor']]], cents: [4900, 39900] },
  { name: 'Inflatable Kayak', options: [['seats', ['1', '2']], ['color', ['yellow', 'green', 'red']], ['paddles', ['included', 'not included']]], cents: [14900, 49900] },
  { name: 'Laptop Stand', options: [['material', ['aluminum', 'wood', 'steel']], ['adjustable', ['yes', 'no']], ['color', ['silver', 'black', 'space gray']]], cents: [2500, 8900] },
  { name: 'Microwave Oven', options: [['capacity', ['0.7 cu ft', '1.1 cu ft', '1.6 cu ft']], ['finish', ['stainless', 'black', 'white']], ['inverter', ['yes', 'no']]], cents: [7900, 29900] },
  { name: 'Monitor', options: [['size', ['24 in', '27 in', '32 in']], ['resolution', ['1080p', '1440p', '4K']], ['refresh rate', ['60Hz', '144Hz', '165Hz']]], cents: [12900, 79900] },
  { name: 'Mountain Bike', options: [['frame size', ['S', 'M', 'L', 'XL']], ['suspension', ['hardtail', 'full']], ['color', ['green', 'black', 'orange']]], cents: [49900, 249900] },
  { name: 'Noise Machine', options: [['sounds', ['10', '20', '30']], ['power source', ['battery', 'plug-in']], ['color', ['white', 'gray']]], cents: [1900, 7900] },
  { name: 'Pillow', options: [['fill', ['memory foam', 'down', 'down alternative', 'latex']], ['firmness', ['soft', 'medium', 'firm']], ['size', ['standard', 'king']]], cents: [1900, 12900] },
  { name: 'Printer', options: [['type', ['inkjet', 'laser']], ['color output', ['mono', 'color']], ['wireless', ['yes', 'no']]], cents: [7900, 49900] },
  { name: 'Projector', options: [['resolution', ['720p', '1080p', '4K']], ['brightness', ['2000 lumens', '3500 lumens', '5000 lumens']], ['throw', ['standard', 'short']]], cents: [14900, 149900] },
  { name: 'Rain Jacket', options: [['size', ['XS', 'S', 'M', 'L', 'XL']], ['color', ['yellow', 'navy', 'olive', 'black']], ['hood', ['fixed', 'packable']]], cents: [4900, 24900] },
  { name: 'Robot Vacuum', options: [['navigation', ['random', 'gyroscope', 'lidar']], ['mop', ['yes', 'no']], ['self-empty', ['yes', 'no']]], cents: [14900, 89900] },
  { name: 'Rug', options: [['size', ["5x7 ft", "8x10 ft", "9x12 ft"]], ['material', ['wool', 'jute', 'polypropylene']], ['pattern', ['solid', 'geometric', 'persian']]], cents: [7900, 59900] },
  { name: 'Sewing Machine', options: [['stitches', ['30', '60', '200']], ['type', ['mechanical', 'computerized']]], cents: [9900, 69900] },
  { name: 'Slow Cooker', options: [['capacity', ['4 qt', '6 qt', '8 qt']], ['programmable', ['yes', 'no']], ['color', ['silver', 'black', 'red']]], cents: [2900, 12900] },
  { name: 'Smart Doorbell', options: [['resolution', ['1080p', '1536p', '2K']], ['power', ['battery', 'wired']], ['chime', ['included', 'not included']]], cents: [5900, 24900] },
  { name: 'Smart Plug', options: [['pack', ['1', '2', '4']], ['energy monitoring', ['yes', 'no']], ['protocol', ['Wi-Fi', 'Zigbee', 'Matter']]], cents: [999, 4999] },
  { name: 'Snowboard', options: [['length', ['148 cm', '154 cm', '158 cm', '162 cm']], ['profile', ['camber', 'rocker', 'hybrid']], ['flex', ['soft', 'medium', 'stiff']]], cents: [24900, 69900] },
  { name: 'Soundbar', options: [['channels', ['2.0', '2.1', '5.1']], ['subwoofer', ['none', 'wireless']], ['color', ['black', 'white']]], cents: [9900, 79900] },
  { name: 'Stand Mixer', options: [['bowl size', ['4.5 qt', '5 qt', '6 qt']], ['color', ['red', 'white', 'black', 'mint']], ['attachments', ['basic', 'deluxe']]], cents: [19900, 54900] },
  { name: 'Suitcase', options: [['size', ['carry-on', 'medium', 'large']], ['shell', ['hard', 'soft']], ['color', ['black', 'navy', 'teal', 'silver']]], cents: [7900, 39900] },
  { name: 'Swim Goggles', options: [['lens', ['clear', 'mirrored', 'tinted']], ['fit', ['junior', 'adult']], ['color', ['blue', 'black', 'pink']]], cents: [999, 3999] },
  { name: 'Tennis Racket', options: [['head size', ['98 sq in', '100 sq in', '105 sq in']], ['grip size', ['2', '3', '4']], ['weight', ['light', 'standard']]], cents: [5900, 27900] },
  { name: 'Toaster', options: [['slots', ['2', '4']], ['finish', ['stainless', 'black', 'cream']], ['bagel mode', ['yes', 'no']]], cents: [2500, 14900] },
  { name: 'Trail Running Shoes', options: [['size', ['7', '8', '9', '10', '11', '12']], ['color', ['black', 'gray', 'orange']], ['waterproof', ['yes', 'no']]], cents: [8900, 17900] },
  { name: 'Travel Mug', options: [['capacity', ['12 oz', '16 oz', '20 oz']], ['lid', ['flip', 'slide', 'straw']], ['color', ['black', 'white', 'green', 'red']]], cents: [1500, 4500] },
  { name: 'USB Hub', options: [['ports', ['4', '7', '10']], ['connector', ['USB-A', 'USB-C']], ['power', ['bus', 'powered']]], cents: [1500, 7900] },
  { name: 'Video Doorbell Chime', options: [['volume', ['standard', 'loud']], ['color', ['white', 'black']]], cents: [1900, 4900] },
  { name: 'Vinyl Record Player', options: [['drive', ['belt', 'direct']], ['speakers', ['built-in', 'none']], ['finish', ['walnut', 'black', 'white']]], cents: [7900, 49900] },
  { name: 'Waffle Maker', options: [['shape', ['round', 'square', 'mini']], ['plates', ['fixed', 'removable']]], cents: [1900, 9900] },
  { name: 'Webcam', options: [['resolution', ['720p', '1080p', '4K']], ['microphone', ['mono', 'stereo']], ['privacy shutter', ['yes', 'no']]], cents: [2500, 19900] },
  { name: 'Winter Gloves', options: [['size', ['S', 'M', 'L', 'XL']], ['material', ['wool', 'leather', 'synthetic']], ['touchscreen', ['yes', 'no']]], cents: [1500, 8900] },
  { name: 'Yoga Block Set', options: [['material', ['foam', 'cork', 'bamboo']], ['count', ['1', '2']], ['color', ['purple', 'blue', 'natural']]], cents: [999, 4999] },
];

/** Name suffixes for catalogues larger than the list above. */
export const MODEL_SUFFIXES: readonly string[] = ['Pro', 'Lite', 'Max', 'Mini', 'Plus', 'Air', 'Ultra', 'Classic'];
